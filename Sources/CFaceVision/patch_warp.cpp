// Image operations on grey frames: the patch warp (OpenCV's, to the bit, without allocating) and
// the detector's downscale; and what the C API says of the build and its errors.
#include "face_vision.h"
#include "shim_support.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>

#include <immintrin.h>

namespace fv {

// cv::warpAffine(frame, patch, forward, INTER_LINEAR, BORDER_REPLICATE) for 8-bit grey, computed the
// way OpenCV 4 computes it (the inverse map in double, source positions in fixed point with 1/32 of
// a pixel, bilinear weights in 1/32768), so the patch is the same to the bit; OpenCV's version
// allocates 14 blocks per call (its matrices and its parallel loop), this one nothing.
void warpAffineReplicate(const uint8_t *source, int width, int height, size_t stride, uint8_t *destination,
                         int side, size_t destinationStride, const double (&forward)[6]) {
    // invertAffineTransform, as warpAffine does unless told the map is already inverse.
    double m[6] = {forward[0], forward[1], forward[2], forward[3], forward[4], forward[5]};
    double d = m[0] * m[4] - m[1] * m[3];
    d = d != 0 ? 1. / d : 0.;
    const double a11 = m[4] * d, a22 = m[0] * d;
    m[0] = a11; m[1] *= -d;
    m[3] *= -d; m[4] = a22;
    const double b1 = -m[0] * m[2] - m[1] * m[5];
    const double b2 = -m[3] * m[2] - m[4] * m[5];
    m[2] = b1; m[5] = b2;
    constexpr int interBits = 5, tabSize = 1 << interBits, abBits = 10, abScale = 1 << abBits;
    constexpr int roundDelta = abScale / tabSize / 2;
    const auto round = [](double v) { return _mm_cvtsd_si32(_mm_set_sd(v)); };  // cvRound: to nearest, ties to even
    const auto clampX = [&](int x) { return std::clamp(x, 0, width - 1); };
    const auto clampY = [&](int y) { return std::clamp(y, 0, height - 1); };
    // Per column, as OpenCV precomputes them.
    int columnX[kLargestPatch], columnY[kLargestPatch];
    side = std::min(side, kLargestPatch);
    for (int x = 0; x < side; ++x) {
        columnX[x] = round(m[0] * x * abScale);
        columnY[x] = round(m[3] * x * abScale);
    }
    for (int y = 0; y < side; ++y) {
        const int x0 = round((m[1] * y + m[2]) * abScale) + roundDelta;
        const int y0 = round((m[4] * y + m[5]) * abScale) + roundDelta;
        uint8_t *out = destination + static_cast<size_t>(y) * destinationStride;
        for (int x = 0; x < side; ++x) {
            const int fxX = (x0 + columnX[x]) >> (abBits - interBits);
            const int fxY = (y0 + columnY[x]) >> (abBits - interBits);
            const int sx = fxX >> interBits, sy = fxY >> interBits;
            const int ax = fxX & (tabSize - 1), ay = fxY & (tabSize - 1);
            const int w00 = (tabSize - ax) * (tabSize - ay) * 32, w01 = ax * (tabSize - ay) * 32;
            const int w10 = (tabSize - ax) * ay * 32, w11 = ax * ay * 32;
            const uint8_t *row0 = source + static_cast<size_t>(clampY(sy)) * stride;
            const uint8_t *row1 = source + static_cast<size_t>(clampY(sy + 1)) * stride;
            const int left = clampX(sx), right = clampX(sx + 1);
            const int sum = row0[left] * w00 + row0[right] * w01 + row1[left] * w10 + row1[right] * w11;
            out[x] = static_cast<uint8_t>(std::clamp((sum + (1 << 14)) >> 15, 0, 255));
        }
    }
}

}  // namespace fv

using fv::report;
using fv::kLargestPatch;

extern "C" {

int fv_downscale(const uint8_t *source, int width, int height, int stride,
                 uint8_t *destination, int destination_width, int destination_height, char **error) {
    // OpenCV reports bad sizes with exceptions, which must not cross into C.
    try {
        cv::Mat from(height, width, CV_8UC1, const_cast<uint8_t *>(source), static_cast<size_t>(stride));
        cv::Mat to(destination_height, destination_width, CV_8UC1, destination);
        cv::resize(from, to, to.size(), 0, 0, cv::INTER_AREA);
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("downscale for detection failed: ") + e.what());
        return -1;
    }
}

int fv_warp_patch(const uint8_t *grey, int width, int height, int stride, const double forward[6], uint8_t *patch,
                  int side, char **error) {
    if (side < 1 || side > kLargestPatch || width < 1 || height < 1) {
        report(error, "patch warp: a side of 1..." + std::to_string(kLargestPatch) + " and a non-empty image are needed");
        return -1;
    }
    const double (&map)[6] = *reinterpret_cast<const double (*)[6]>(forward);
    fv::warpAffineReplicate(grey, width, height, static_cast<size_t>(stride), patch, side, static_cast<size_t>(side), map);
    return 0;
}

int fv_optimised_for_avx2(void) {
#if defined(__AVX2__) && defined(__FMA__)
    return 1;
#else
    return 0;
#endif
}

void fv_free_error(char *error) { free(error); }

}  // extern "C"
