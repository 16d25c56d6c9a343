// Image operations on grey frames: the patch warp (OpenCV's, to the bit, without allocating), the
// block means a small patch is warped from, and the detector's downscale; and what the C API says
// of the build and its errors.
#include "face_vision.h"
#include "shim_support.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

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

void averageBlocks(const uint8_t *source, int width, int height, size_t stride, int factor, int firstColumn, int firstRow,
                   int columns, int rows, uint8_t *destination, uint16_t *columnSums) {
    // Each row of blocks: the columns of pixels summed down the block's rows first (contiguous, so
    // the compiler vectorises it; at most 255 rows of 255 fit 16 bits), then each block's columns
    // summed across, a chunk of blocks at a time that fits kAveragingScratch.
    const int blocksPerChunk = std::max(1, kAveragingScratch / factor);
    for (int r = 0; r < rows; ++r) {
        const int y0 = (firstRow + r) * factor, y1 = std::min(y0 + factor, height);
        uint8_t *out = destination + static_cast<size_t>(r) * columns;
        for (int chunk = 0; chunk < columns; chunk += blocksPerChunk) {
            const int chunkBlocks = std::min(blocksPerChunk, columns - chunk);
            const int x0 = (firstColumn + chunk) * factor, x1 = std::min(x0 + chunkBlocks * factor, width);
            std::fill(columnSums, columnSums + (x1 - x0), uint16_t{0});
            for (int y = y0; y < y1; ++y) {
                const uint8_t *line = source + static_cast<size_t>(y) * stride + x0;
                for (int x = 0; x < x1 - x0; ++x) columnSums[x] = static_cast<uint16_t>(columnSums[x] + line[x]);
            }
            for (int b = 0; b < chunkBlocks; ++b) {
                const int from = b * factor, to = std::min(from + factor, x1 - x0);
                uint32_t sum = 0;
                for (int x = from; x < to; ++x) sum += columnSums[x];
                const uint32_t count = static_cast<uint32_t>((to - from) * (y1 - y0));
                out[chunk + b] = static_cast<uint8_t>((sum + count / 2) / count);
            }
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

int fv_average_blocks(const uint8_t *grey, int width, int height, int stride, int factor, uint8_t *destination, char **error) {
    if (factor < 1 || factor > fv::kLargestAveragingFactor || width < 1 || height < 1) {
        report(error, "block means: a factor of 1..." + std::to_string(fv::kLargestAveragingFactor) + " and a non-empty image are needed");
        return -1;
    }
    // The scratch's allocation may throw, which must not cross into C.
    try {
        const int columns = (width + factor - 1) / factor, rows = (height + factor - 1) / factor;
        std::vector<uint16_t> columnSums(fv::kAveragingScratch);
        fv::averageBlocks(grey, width, height, static_cast<size_t>(stride), factor, 0, 0, columns, rows, destination, columnSums.data());
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("block means failed: ") + e.what());
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
