// dlib and OpenCV calls only: everything else (tracking, smoothing, expressions) is Swift.
#include "face_vision.h"
#include "fhog_reusing.h"
#include "pruned_filters.h"

#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/opencv/cv_image.h>
#include <opencv2/calib3d.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include <immintrin.h>
#include <sys/mman.h>

namespace {
// The detector scanning only the first `levels` levels of its image pyramid (1: windows of its own
// size only).
dlib::frontal_face_detector withPyramidLevels(const dlib::frontal_face_detector &detector, unsigned long levels) {
    dlib::frontal_face_detector::image_scanner_type scanner;
    scanner.copy_configuration(detector.get_scanner());
    scanner.set_max_pyramid_levels(levels);
    std::vector<dlib::frontal_face_detector> parts;
    for (unsigned long i = 0; i < detector.num_detectors(); ++i) {
        parts.emplace_back(scanner, detector.get_overlap_tester(), detector.get_w(i));
    }
    return dlib::frontal_face_detector(parts);
}

// The side of the boxes a one-level detector draws (smaller than its 80-pixel window, which
// includes a margin): read from the windows it scores on a blank image.
double boxSide(dlib::frontal_face_detector &singleLevel) {
    dlib::array2d<unsigned char> blank(160, 160);
    dlib::assign_all_pixels(blank, 128);
    std::vector<dlib::rect_detection> windows;
    singleLevel(blank, windows, -1e9);
    if (windows.empty()) throw std::runtime_error("the face detector scores no window");
    return static_cast<double>(windows.front().rect.width());
}
}  // namespace

// What fv_locate_face scans a patch of one size with, kept between calls: its HOG features, the
// extraction's scratch and the filters' outputs. dlib's scanner builds all of these on every call
// (77 allocations per check of a fit); kept, they are sized once per patch size.
struct fv_patch_scan {
    int side = 0;
    dlib::array<dlib::array2d<float>> hog;
    dlib::array2d<dlib::matrix<float, 18, 1>> hist;
    dlib::array2d<float> norm, saliency, scratch;
};

// What fv_detect scans a frame with, kept between scans: per pyramid level its image (level 1 on)
// and a patch scan's buffers, and the lists of windows. dlib's object_detector keeps only the
// features and builds the rest on every scan (about 140 allocations for a coarse scan of a 720p
// frame); kept, they are sized once per frame size.
struct fv_pyramid_scan {
    std::vector<dlib::array2d<unsigned char>> images;
    std::vector<fv_patch_scan> levels;
    std::vector<std::pair<double, dlib::rectangle>> windows;
    std::vector<dlib::rect_detection> candidates;
    std::vector<dlib::point> wholeSums;  // the positions fv_pruned_filters sums whole on a level
};

// dlib ships its frontal detector compressed and decompresses it on every call, about 0.4 s of
// CPU: a process (and every stream that starts in `serve`) copies one decompressed the first time.
static const dlib::frontal_face_detector &frontalFaceDetector() {
    static const dlib::frontal_face_detector decompressed = dlib::get_frontal_face_detector();
    return decompressed;
}

// The frontal detector's weight vectors as fv_pruned_filters, one per weight vector, made once.
static const std::vector<fv_pruned_filters> &frontalFaceFilters() {
    static const std::vector<fv_pruned_filters> filters = [] {
        std::vector<fv_pruned_filters> made;
        const dlib::frontal_face_detector &detector = frontalFaceDetector();
        for (unsigned long d = 0; d < detector.num_detectors(); ++d) made.emplace_back(detector.get_processed_w(d).get_detect_argument());
        return made;
    }();
    return filters;
}

struct fv_detector {
    dlib::frontal_face_detector detector = frontalFaceDetector();
    std::vector<dlib::rect_detection> found;
    // Every scan is of one frame size and a range of its levels: the coarse and the fine scan use
    // levels of their own, so they share the buffers.
    fv_pyramid_scan pyramid;
    bool pruneFilters = true;
    // For fv_locate_face: the same detector on one pyramid level, the side of the boxes it draws
    // there, and the upright patch it scans.
    dlib::frontal_face_detector singleLevel = withPyramidLevels(detector, 1);
    double windowSide = boxSide(singleLevel);
    cv::Mat patch;
    // One per patch size in use (a check and a search), the older replaced by a third size.
    fv_patch_scan scans[2];
    int lastScan = 0;
};

// Memory on 2 MB pages where the kernel allows it (transparent huge pages on madvise): a fit reads
// 7,500 leaves scattered over 16 MB, and on 4 KB pages nearly every one of those reads also misses
// the TLB. The fit is a third faster on huge pages.
template <typename T> struct HugePageAllocator {
    using value_type = T;
    static constexpr size_t page = 2 << 20;
    HugePageAllocator() = default;
    template <typename U> HugePageAllocator(const HugePageAllocator<U> &) {}
    T *allocate(size_t count) {
        void *memory = std::aligned_alloc(page, rounded(count));
        if (!memory) throw std::bad_alloc();
        madvise(memory, rounded(count), MADV_HUGEPAGE);
        return static_cast<T *>(memory);
    }
    void deallocate(T *memory, size_t) { std::free(memory); }
    static size_t rounded(size_t count) { return (count * sizeof(T) + page - 1) / page * page; }
    template <typename U> bool operator==(const HugePageAllocator<U> &) const { return true; }
};

// One cascade level of the shape predictor, laid out for speed: every tree's splits in one array
// and every leaf's shape update in 8-bit fixed-point values, each leaf with its own scale. dlib keeps
// each leaf as its own heap vector of floats, 65 MB in all and scattered; a fit reads one leaf per
// tree, 7,500 in all, so the fit is bound by memory traffic. Compact, it reads a quarter as much,
// contiguously. The rounding (1/254 of each leaf's largest value) is far below the fit's own noise:
// a leaf is one of 500 small steps that each level sums, and roundings of independent leaves cancel
// rather than add up. The model is read tree by tree, so dlib's form never exists whole in memory.
using LeafValue = int8_t;
constexpr float kLeafSteps = 127;

struct fv_level {
    struct split { uint32_t a, b; float threshold; };
    std::vector<split> splits;     // trees x splitsPerTree
    const LeafValue *leaves = nullptr;  // trees x (splitsPerTree + 1) x values, in the model's leafValues
    std::vector<float> scales;     // trees x (splitsPerTree + 1)
    size_t trees = 0, splitsPerTree = 0;
};

// dlib's shape predictor, evaluated here rather than through dlib::shape_predictor so that the
// landmarks keep their sub-pixel precision (dlib rounds them to whole pixels, which shows as jitter)
// and the scratch vectors are reused (dlib allocates them on every fit). Same model file, same trees.
// Filled in by fv_landmark_model_load and never written afterwards: fitting reaches it only through
// a const reference, so many fitters on many threads can read one model at once.
struct fv_landmark_model {
    dlib::matrix<float, 0, 1> initialShape;
    std::vector<fv_level> levels;
    // The leaves of every level in one allocation, so that huge pages are not half empty.
    std::vector<LeafValue, HugePageAllocator<LeafValue>> leafValues;
    std::vector<std::vector<unsigned long>> anchors;
    std::vector<std::vector<dlib::vector<float, 2>>> deltas;
    size_t mostFeatures = 0;  // of any level: what a fitter's feature buffer must hold
    size_t mostTrees = 0;     // of any level: what a fitter's leaf indices must hold
};

// Everything a fit writes, sized by fv_fitter_create so that fitting allocates nothing.
struct fv_fitter {
    const fv_landmark_model *model;
    dlib::matrix<float, 0, 1> shape;
    std::vector<float> features;
    std::vector<float> sum;
    std::vector<uint32_t> leafOfTree;
    float similarity[4];
};

struct fv_pose_solver {
    std::vector<cv::Point3d> model;
    std::vector<cv::Point2d> image;
    cv::Mat camera = cv::Mat::zeros(3, 3, CV_64F);
    cv::Mat distortion = cv::Mat::zeros(4, 1, CV_64F);
    cv::Mat rotationVector = cv::Mat::zeros(3, 1, CV_64F);
    cv::Mat translation = cv::Mat::zeros(3, 1, CV_64F);
    cv::Mat rotation = cv::Mat::zeros(3, 3, CV_64F);
};

namespace {

// dlib's apply_filters_to_fhog (scan_fhog_pyramid.h) on the buffers of `scan`: the saliency of every
// window of the patch under one detector's filters. dlib's version clears the saliency image and
// builds its scratch image on every call; here the first filter overwrites and the rest add.
template <typename Filterbank> dlib::rectangle filterPatch(const Filterbank &w, fv_patch_scan &scan) {
    const auto &feats = scan.hog;
    dlib::rectangle area;
    if (w.num_separable_filters() > w.filters.size() * std::min(w.filters[0].nr(), w.filters[0].nc()) / 3.0) {
        area = dlib::spatially_filter_image(feats[0], scan.saliency, w.filters[0]);
        for (unsigned long i = 1; i < w.filters.size(); ++i) {
            dlib::spatially_filter_image(feats[i], scan.saliency, w.filters[i], 1, false, true);
        }
        return area;
    }
    bool first = true;
    for (unsigned long i = 0; i < w.row_filters.size(); ++i) {
        for (unsigned long j = 0; j < w.row_filters[i].size(); ++j) {
            area = dlib::float_spatially_filter_image_separable(feats[i], scan.saliency, w.row_filters[i][j], w.col_filters[i][j],
                                                                scan.scratch, !first);
            first = false;
        }
    }
    if (first) {
        scan.saliency.set_size(feats[0].nr(), feats[0].nc());
        dlib::assign_all_pixels(scan.saliency, 0);
    }
    return area;
}

// cv::warpAffine(frame, patch, forward, INTER_LINEAR, BORDER_REPLICATE) for 8-bit grey, computed the
// way OpenCV 4 computes it (the inverse map in double, source positions in fixed point with 1/32 of
// a pixel, bilinear weights in 1/32768), so the patch is the same to the bit; OpenCV's version
// allocates 14 blocks per call (its matrices and its parallel loop), this one nothing.
// The largest patch fv_locate_face scans: its 80-pixel window plus a cell, and a box more on every side.
constexpr int kLargestPatch = 96 + 2 * 80;

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

// What dlib::object_detector<scan_fhog_pyramid>::operator() does (scanner.load, then each weight
// vector's detect, then non-maximum suppression), step by step and in the same order, so that the
// windows found and their scores are dlib's, but on `scan`'s buffers: nothing is allocated once a
// frame size has been scanned (beyond the first scan, the lists only grow when a scan finds more
// windows than any before). With `pruned`, the filters run in two steps (pruned_filters.h), which
// leaves every score that reaches the floor as dlib's and skips most of the work on the rest.
// Only levels `firstLevel` up to (not including) `endLevel` are scanned: their images are made as
// dlib makes them, each from the one above, but the features and filters run on those levels alone.
template <typename Image>
void scanPyramid(const dlib::frontal_face_detector &detector, const std::vector<fv_pruned_filters> *pruned, const Image &image,
                 double adjust, unsigned long firstLevel, unsigned long endLevel, fv_pyramid_scan &scan,
                 std::vector<dlib::rect_detection> &found) {
    if (pruned && pruned->size() != detector.num_detectors()) throw std::logic_error("pruned filters of another detector");
    const auto &scanner = detector.get_scanner();
    const int cell = static_cast<int>(scanner.get_cell_size());
    const long windowWidth = static_cast<long>(scanner.get_fhog_window_width());
    const long windowHeight = static_cast<long>(scanner.get_fhog_window_height());
    // impl::create_fhog_pyramid: how many levels, then each level's features from the level above.
    dlib::pyramid_down<6> down;
    unsigned long levels = 0;
    dlib::rectangle rect = dlib::get_rect(image);
    do {
        rect = down.rect_down(rect);
        ++levels;
    } while (rect.width() >= static_cast<long>(scanner.get_min_pyramid_layer_width()) &&
             rect.height() >= static_cast<long>(scanner.get_min_pyramid_layer_height()) && levels < scanner.get_max_pyramid_levels());
    levels = std::min(levels, endLevel);
    if (scan.levels.size() < levels) scan.levels.resize(levels);
    if (scan.images.size() < levels) scan.images.resize(levels);
    if (firstLevel == 0) {
        dlib::impl_fhog::extract_fhog_features_reusing(image, scan.levels[0].hog, scan.levels[0].hist, scan.levels[0].norm, cell,
                                                       static_cast<int>(windowHeight), static_cast<int>(windowWidth));
    }
    for (unsigned long level = 1; level < levels; ++level) {
        if (level == 1) {
            down(image, scan.images[1]);
        } else {
            down(scan.images[level - 1], scan.images[level]);
        }
        if (level < firstLevel) continue;
        fv_patch_scan &at = scan.levels[level];
        dlib::impl_fhog::extract_fhog_features_reusing(scan.images[level], at.hog, at.hist, at.norm, cell,
                                                       static_cast<int>(windowHeight), static_cast<int>(windowWidth));
    }
    // Each weight vector's detect (impl::detect_from_fhog_pyramid), its windows sorted best first.
    const long boxWidth = windowWidth - 2 * static_cast<long>(scanner.get_padding());
    const long boxHeight = windowHeight - 2 * static_cast<long>(scanner.get_padding());
    const dlib::default_fhog_feature_extractor &features = scanner.get_feature_extractor();
    scan.candidates.clear();
    for (unsigned long d = 0; d < detector.num_detectors(); ++d) {
        const auto &weights = detector.get_processed_w(d);
        const double threshold = weights.w(scanner.get_num_dimensions());
        const double floor = threshold + adjust;
        scan.windows.clear();
        for (unsigned long level = firstLevel; level < levels; ++level) {
            fv_patch_scan &at = scan.levels[level];
            if (at.hog.size() == 0) continue;  // a level too small for the features
            const dlib::rectangle area = pruned ? (*pruned)[d].apply(weights.get_detect_argument(), at.hog, floor, at.saliency, at.scratch, scan.wholeSums)
                                                : filterPatch(weights.get_detect_argument(), at);
            for (long r = area.top(); r <= area.bottom(); ++r) {
                for (long c = area.left(); c <= area.right(); ++c) {
                    if (at.saliency[r][c] < floor) continue;
                    dlib::rectangle window = features.feats_to_image(dlib::centered_rect(dlib::point(c, r), boxWidth, boxHeight),
                                                                     cell, windowHeight, windowWidth);
                    window = down.rect_up(window, level);
                    scan.windows.push_back(std::make_pair(at.saliency[r][c], window));
                }
            }
        }
        std::sort(scan.windows.rbegin(), scan.windows.rend(), dlib::impl::compare_pair_rect);
        for (const auto &window : scan.windows) {
            dlib::rect_detection candidate;
            candidate.detection_confidence = window.first - threshold;
            candidate.weight_index = d;
            candidate.rect = window.second;
            scan.candidates.push_back(candidate);
        }
    }
    // Non-maximum suppression, as object_detector does it.
    found.clear();
    if (detector.num_detectors() > 1) std::sort(scan.candidates.rbegin(), scan.candidates.rend());
    const dlib::test_box_overlap overlaps = detector.get_overlap_tester();
    for (const auto &candidate : scan.candidates) {
        bool suppressed = false;
        for (const auto &kept : found) {
            if (overlaps(kept.rect, candidate.rect)) {
                suppressed = true;
                break;
            }
        }
        if (!suppressed) found.push_back(candidate);
    }
}

void report(char **error, const std::string &message) {
    if (error) *error = strdup(message.c_str());
}

// A view of caller-owned grey pixels, for dlib's generic image interface; no copy.
dlib::cv_image<unsigned char> view(const uint8_t *grey, int width, int height, int stride) {
    cv::Mat mat(height, width, CV_8UC1, const_cast<uint8_t *>(grey), static_cast<size_t>(stride));
    return dlib::cv_image<unsigned char>(mat);
}

// Landmarks of the generic face model the pose is solved against, in the iBUG order indices below.
// Camera-style axes (x right, y down, z away from the camera), millimetres, nose tip at the origin:
// a face looking straight at the camera has the identity rotation.
constexpr int kPoseLandmarks[] = {30, 8, 36, 45, 48, 54};
const cv::Point3d kPoseModel[] = {
    {0, 0, 0},          // 30 nose tip
    {0, 66, 13},        // 8 chin
    {-45, -34, 27},     // 36 outer corner of the subject's right eye
    {45, -34, 27},      // 45 outer corner of the subject's left eye
    {-30, 30, 25},      // 48 right mouth corner
    {30, 30, 25},       // 54 left mouth corner
};
constexpr double kDegrees = 180.0 / M_PI;
constexpr int kPosePoints = sizeof(kPoseLandmarks) / sizeof(kPoseLandmarks[0]);

// Refines a pose seeded by the face's previous one: Levenberg-Marquardt on the reprojection error of
// the model's points, the objective solvePnP's iterative method minimises, with the rotation updated
// as R <- exp([w]x) R. Everything lives on the stack: solvePnP allocates 160-210 blocks per call (its
// matrices and its solver's), and this runs on every tracked frame. False when the seed or a step
// puts a point behind the camera or leaves the numbers non-finite: the caller then solves afresh.
bool refinePose(const double (&image)[kPosePoints][2], double f, double cx, double cy, double (&rotation)[9],
                double (&translation)[3]) {
    double r[9], t[3];
    std::copy(std::begin(rotation), std::end(rotation), r);
    std::copy(std::begin(translation), std::end(translation), t);
    // Residuals (predicted - observed) and their squared sum for a rotation and translation.
    const auto residuals = [&](const double (&rr)[9], const double (&tt)[3], double (&res)[2 * kPosePoints]) {
        double sum = 0;
        for (int i = 0; i < kPosePoints; ++i) {
            const cv::Point3d &m = kPoseModel[i];
            const double x = rr[0] * m.x + rr[1] * m.y + rr[2] * m.z + tt[0];
            const double y = rr[3] * m.x + rr[4] * m.y + rr[5] * m.z + tt[1];
            const double z = rr[6] * m.x + rr[7] * m.y + rr[8] * m.z + tt[2];
            if (!(z > 1e-6)) return -1.0;
            res[2 * i] = f * x / z + cx - image[i][0];
            res[2 * i + 1] = f * y / z + cy - image[i][1];
            sum += res[2 * i] * res[2 * i] + res[2 * i + 1] * res[2 * i + 1];
        }
        return std::isfinite(sum) ? sum : -1.0;
    };
    double res[2 * kPosePoints];
    double error = residuals(r, t, res);
    if (error < 0) return false;
    double lambda = 1e-3;
    for (int iteration = 0; iteration < 30; ++iteration) {
        // Jacobian of the residuals by (w, t): with a = R m, p = a + t, d(p)/dw = -[a]x, d(p)/dt = I.
        double jtj[6][6] = {}, jtr[6] = {};
        for (int i = 0; i < kPosePoints; ++i) {
            const cv::Point3d &m = kPoseModel[i];
            const double ax = r[0] * m.x + r[1] * m.y + r[2] * m.z, ay = r[3] * m.x + r[4] * m.y + r[5] * m.z,
                         az = r[6] * m.x + r[7] * m.y + r[8] * m.z;
            const double x = ax + t[0], y = ay + t[1], z = az + t[2];
            const double iz = 1 / z;
            // d(u, v)/d(x, y, z)
            const double du[3] = {f * iz, 0, -f * x * iz * iz}, dv[3] = {0, f * iz, -f * y * iz * iz};
            // d(x, y, z)/dw = -[a]x = [[0, az, -ay], [-az, 0, ax], [ay, -ax, 0]]
            const double dp[3][3] = {{0, az, -ay}, {-az, 0, ax}, {ay, -ax, 0}};
            double ju[6], jv[6];
            for (int k = 0; k < 3; ++k) {
                ju[k] = du[0] * dp[0][k] + du[1] * dp[1][k] + du[2] * dp[2][k];
                jv[k] = dv[0] * dp[0][k] + dv[1] * dp[1][k] + dv[2] * dp[2][k];
                ju[3 + k] = du[k];
                jv[3 + k] = dv[k];
            }
            for (int a = 0; a < 6; ++a) {
                jtr[a] += ju[a] * res[2 * i] + jv[a] * res[2 * i + 1];
                for (int b = 0; b < 6; ++b) jtj[a][b] += ju[a] * ju[b] + jv[a] * jv[b];
            }
        }
        bool improved = false;
        double step[6] = {};
        for (int attempt = 0; attempt < 10 && !improved; ++attempt) {
            // (JtJ + lambda diag(JtJ)) step = -Jtr, by Gaussian elimination with partial pivoting.
            double a[6][7];
            for (int row = 0; row < 6; ++row) {
                for (int col = 0; col < 6; ++col) a[row][col] = jtj[row][col];
                a[row][row] += lambda * std::max(jtj[row][row], 1e-12);
                a[row][6] = -jtr[row];
            }
            bool singular = false;
            for (int col = 0; col < 6 && !singular; ++col) {
                int pivot = col;
                for (int row = col + 1; row < 6; ++row) if (std::fabs(a[row][col]) > std::fabs(a[pivot][col])) pivot = row;
                if (!(std::fabs(a[pivot][col]) > 1e-300)) { singular = true; break; }
                if (pivot != col) for (int k = 0; k < 7; ++k) std::swap(a[col][k], a[pivot][k]);
                for (int row = col + 1; row < 6; ++row) {
                    const double factor = a[row][col] / a[col][col];
                    for (int k = col; k < 7; ++k) a[row][k] -= factor * a[col][k];
                }
            }
            if (singular) return false;
            for (int row = 5; row >= 0; --row) {
                double v = a[row][6];
                for (int k = row + 1; k < 6; ++k) v -= a[row][k] * step[k];
                step[row] = v / a[row][row];
            }
            // R <- exp([w]x) R (Rodrigues' formula), t <- t + dt.
            const double angle = std::sqrt(step[0] * step[0] + step[1] * step[1] + step[2] * step[2]);
            double e[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
            if (angle > 0) {
                const double kx = step[0] / angle, ky = step[1] / angle, kz = step[2] / angle;
                const double c = std::cos(angle), s = std::sin(angle), v = 1 - c;
                e[0] = c + kx * kx * v; e[1] = kx * ky * v - kz * s; e[2] = kx * kz * v + ky * s;
                e[3] = ky * kx * v + kz * s; e[4] = c + ky * ky * v; e[5] = ky * kz * v - kx * s;
                e[6] = kz * kx * v - ky * s; e[7] = kz * ky * v + kx * s; e[8] = c + kz * kz * v;
            }
            double nr[9], nt[3];
            for (int row = 0; row < 3; ++row) {
                for (int col = 0; col < 3; ++col) {
                    nr[row * 3 + col] = e[row * 3] * r[col] + e[row * 3 + 1] * r[3 + col] + e[row * 3 + 2] * r[6 + col];
                }
                nt[row] = t[row] + step[3 + row];
            }
            double nres[2 * kPosePoints];
            const double nerror = residuals(nr, nt, nres);
            if (nerror >= 0 && nerror <= error) {
                std::copy(std::begin(nr), std::end(nr), r);
                std::copy(std::begin(nt), std::end(nt), t);
                std::copy(std::begin(nres), std::end(nres), res);
                const double gain = error - nerror;
                error = nerror;
                lambda = std::max(lambda / 10, 1e-9);
                improved = true;
                // Converged: the step or the gain is below what the landmarks' precision can tell.
                double size = 0;
                for (double v : step) size = std::max(size, std::fabs(v));
                if (size < 1e-9 || gain <= 1e-12 * std::max(1.0, error)) {
                    std::copy(std::begin(r), std::end(r), rotation);
                    std::copy(std::begin(t), std::end(t), translation);
                    return true;
                }
            } else {
                lambda *= 10;
            }
        }
        if (!improved) break;  // no step lowers the error: at the minimum
    }
    std::copy(std::begin(r), std::end(r), rotation);
    std::copy(std::begin(t), std::end(t), translation);
    return true;
}

// Yaw, pitch and roll of R = Rz(roll) Ry(yaw) Rx(pitch).
void poseAngles(fv_pose *pose) {
    const double *r = pose->rotation;
    pose->yaw = std::asin(std::clamp(-r[6], -1.0, 1.0)) * kDegrees;
    pose->pitch = std::atan2(r[7], r[8]) * kDegrees;
    pose->roll = std::atan2(r[3], r[0]) * kDegrees;
}

// Reads the cascade of a serialised dlib::shape_predictor (a vector of forests, each a vector of
// regression trees) one tree at a time into fv_level's compact form, with every level's leaves in
// `leafValues`. Every tree of a level must be complete and of one depth, as dlib trains them.
std::vector<fv_level> readCascade(std::istream &in, long values, std::vector<LeafValue, HugePageAllocator<LeafValue>> &leafValues) {
    unsigned long levelCount = 0;
    dlib::deserialize(levelCount, in);
    if (levelCount > 1000) throw dlib::serialization_error("implausible cascade length");
    std::vector<fv_level> levels(levelCount);
    std::vector<std::vector<LeafValue>> leavesOfLevel(levelCount);
    for (size_t level = 0; level < levelCount; ++level) {
        fv_level &out = levels[level];
        std::vector<LeafValue> &outLeaves = leavesOfLevel[level];
        unsigned long treeCount = 0;
        dlib::deserialize(treeCount, in);
        if (treeCount > 100000) throw dlib::serialization_error("implausible forest size");
        out.trees = treeCount;
        dlib::impl::regression_tree tree;
        for (unsigned long t = 0; t < treeCount; ++t) {
            deserialize(tree, in);  // the tree's own friend, found by argument-dependent lookup
            if (t == 0) {
                out.splitsPerTree = tree.splits.size();
                const size_t leaves = out.splitsPerTree + 1;
                out.splits.reserve(treeCount * out.splitsPerTree);
                outLeaves.reserve(treeCount * leaves * static_cast<size_t>(values));
                out.scales.reserve(treeCount * leaves);
            }
            if (tree.splits.size() != out.splitsPerTree || tree.leaf_values.size() != out.splitsPerTree + 1) {
                throw dlib::serialization_error("trees of one level differ in depth");
            }
            for (const auto &split : tree.splits) {
                out.splits.push_back({static_cast<uint32_t>(split.idx1), static_cast<uint32_t>(split.idx2), split.thresh});
            }
            for (const auto &leaf : tree.leaf_values) {
                if (leaf.size() != values) throw dlib::serialization_error("leaf of the wrong size");
                float largest = 0;
                for (long k = 0; k < values; ++k) largest = std::max(largest, std::fabs(leaf(k)));
                const float scale = largest > 0 ? largest / kLeafSteps : 1.0f;
                out.scales.push_back(scale);
                for (long k = 0; k < values; ++k) outLeaves.push_back(static_cast<LeafValue>(std::lround(leaf(k) / scale)));
            }
        }
    }
    size_t total = 0;
    for (const auto &leaves : leavesOfLevel) total += leaves.size();
    leafValues.clear();
    leafValues.reserve(total);
    for (size_t level = 0; level < levelCount; ++level) {
        levels[level].leaves = leafValues.data() + leafValues.size();
        leafValues.insert(leafValues.end(), leavesOfLevel[level].begin(), leavesOfLevel[level].end());
        std::vector<LeafValue>().swap(leavesOfLevel[level]);
    }
    return levels;
}

// The transform from the shape's normalised space to the image: (0,0) to the box's top left corner
// and (1,1) to its bottom right, as dlib::impl::unnormalizing_tform(rect) maps them, but for a box
// of sub-pixel position turned by `angle` (radians, clockwise on the image) about its centre, so that
// a tilted face is fitted upright. Computed directly: dlib fits it by least squares through vectors
// and matrices it allocates on every call.
dlib::point_transform_affine unnormalizing(const fv_box &box, float angle) {
    const double c = std::cos(angle), s = std::sin(angle);
    const double w = box.width - 1, h = box.height - 1;
    dlib::matrix<double, 2, 2> m;
    m = c * w, -s * h,
        s * w, c * h;
    const dlib::vector<double, 2> centre(box.x + w / 2, box.y + h / 2);
    return dlib::point_transform_affine(m, centre - m * dlib::vector<double, 2>(0.5, 0.5));
}

// The 2x2 scale-rotation (row-major) that best maps `from` onto `to` (least squares, both
// centred): what dlib::impl::find_tform_between_shapes computes, without its temporary vectors.
void similarity(const dlib::matrix<float, 0, 1> &from, const dlib::matrix<float, 0, 1> &to, float (&result)[4]) {
    const long n = from.size() / 2;
    double fx = 0, fy = 0, tx = 0, ty = 0;
    for (long i = 0; i < n; ++i) {
        fx += from(2 * i); fy += from(2 * i + 1);
        tx += to(2 * i); ty += to(2 * i + 1);
    }
    fx /= n; fy /= n; tx /= n; ty /= n;
    double real = 0, imaginary = 0, norm = 0;
    for (long i = 0; i < n; ++i) {
        const double ax = from(2 * i) - fx, ay = from(2 * i + 1) - fy;
        const double bx = to(2 * i) - tx, by = to(2 * i + 1) - ty;
        real += ax * bx + ay * by;
        imaginary += ax * by - ay * bx;
        norm += ax * ax + ay * ay;
    }
    const double a = norm > 0 ? real / norm : 1, b = norm > 0 ? imaginary / norm : 0;
    result[0] = static_cast<float>(a);
    result[1] = static_cast<float>(-b);
    result[2] = static_cast<float>(b);
    result[3] = static_cast<float>(a);
}

}  // namespace

extern "C" {

fv_detector *fv_detector_create(char **error) {
    try {
        return new fv_detector();
    } catch (const std::exception &e) {
        report(error, std::string("cannot create the face detector: ") + e.what());
        return nullptr;
    }
}

void fv_detector_destroy(fv_detector *detector) { delete detector; }

void fv_detector_prune_filters(fv_detector *detector, int prune) { detector->pruneFilters = prune != 0; }

int fv_detect(fv_detector *detector, const uint8_t *grey, int width, int height, int stride, double minimum_score,
              int first_level, int level_count, fv_box *boxes, double *scores, int capacity, char **error) {
    try {
        if (first_level < 0 || level_count < 0) throw std::invalid_argument("negative pyramid level");
        detector->found.clear();
        const unsigned long end = level_count == 0 ? ~0ul : static_cast<unsigned long>(first_level + level_count);
        scanPyramid(detector->detector, detector->pruneFilters ? &frontalFaceFilters() : nullptr, view(grey, width, height, stride),
                    minimum_score, static_cast<unsigned long>(first_level), end, detector->pyramid, detector->found);
        std::sort(detector->found.begin(), detector->found.end(),
                  [](const dlib::rect_detection &a, const dlib::rect_detection &b) {
                      return a.detection_confidence > b.detection_confidence;
                  });
        int count = std::min<int>(capacity, static_cast<int>(detector->found.size()));
        for (int i = 0; i < count; ++i) {
            const dlib::rectangle &r = detector->found[i].rect;
            boxes[i] = {static_cast<float>(r.left()), static_cast<float>(r.top()),
                        static_cast<float>(r.width()), static_cast<float>(r.height())};
            if (scores) scores[i] = detector->found[i].detection_confidence;
        }
        return count;
    } catch (const std::exception &e) {
        report(error, std::string("face detection failed: ") + e.what());
        return -1;
    }
}

int fv_locate_face(fv_detector *detector, const uint8_t *grey, int width, int height, int stride,
                   fv_box box, float angle, float reach, fv_box *found, double *score, char **error) {
    try {
        // The patch is the box turned upright and scaled to the side of the detector's boxes, with
        // `reach` boxes more on every side (the frame's border pixels replicated beyond its edge), in
        // whole cells of 8 pixels around the detector's 80-pixel window.
        constexpr double floor = -2;
        const double margin = std::ceil(std::clamp(reach, 0.0f, 1.0f) * detector->windowSide / 8) * 8;
        const double side = 96 + 2 * margin;
        const double scale = detector->windowSide / std::max(1.0f, box.width);
        const double c = std::cos(angle), s = std::sin(angle);
        const double cx = box.x + (box.width - 1) / 2.0, cy = box.y + (box.height - 1) / 2.0;
        const double half = (side - 1) / 2;
        // patch = scale * R(-angle) * (frame - centre) + half
        double forward[6] = {c * scale, s * scale, 0, -s * scale, c * scale, 0};
        forward[2] = half - forward[0] * cx - forward[1] * cy;
        forward[5] = half - forward[3] * cx - forward[4] * cy;
        // One buffer for the largest patch; smaller ones are views of it, so nothing is reallocated.
        detector->patch.create(kLargestPatch, kLargestPatch, CV_8UC1);
        cv::Mat patch = detector->patch(cv::Rect(0, 0, static_cast<int>(side), static_cast<int>(side)));
        const int sideInPixels = static_cast<int>(side);
        warpAffineReplicate(grey, width, height, static_cast<size_t>(stride), patch.data, sideInPixels, patch.step, forward);
        int which = detector->scans[0].side == sideInPixels ? 0 : detector->scans[1].side == sideInPixels ? 1 : 1 - detector->lastScan;
        detector->lastScan = which;
        fv_patch_scan &scan = detector->scans[which];
        scan.side = sideInPixels;
        // What the single-level detector does (dlib's object_detector over scan_fhog_pyramid, one
        // pyramid level: features, then each of its filters), on buffers kept between calls; only
        // the best window is wanted, so dlib's non-maximum suppression, which always keeps the best,
        // is left out.
        const auto &scanner = detector->singleLevel.get_scanner();
        const int cell = static_cast<int>(scanner.get_cell_size());
        const long windowWidth = static_cast<long>(scanner.get_fhog_window_width());
        const long windowHeight = static_cast<long>(scanner.get_fhog_window_height());
        dlib::impl_fhog::extract_fhog_features_reusing(dlib::cv_image<unsigned char>(patch), scan.hog, scan.hist, scan.norm,
                                                       cell, static_cast<int>(windowHeight), static_cast<int>(windowWidth));
        *score = floor;
        *found = box;
        if (scan.hog.size() == 0) return 0;  // a patch too small for one window
        const long boxWidth = windowWidth - 2 * static_cast<long>(scanner.get_padding());
        const long boxHeight = windowHeight - 2 * static_cast<long>(scanner.get_padding());
        const dlib::default_fhog_feature_extractor &features = scanner.get_feature_extractor();
        for (unsigned long d = 0; d < detector->singleLevel.num_detectors(); ++d) {
            const auto &weights = detector->singleLevel.get_processed_w(d);
            const double threshold = weights.w(scanner.get_num_dimensions());
            const dlib::rectangle area = filterPatch(weights.get_detect_argument(), scan);
            for (long r = area.top(); r <= area.bottom(); ++r) {
                for (long col = area.left(); col <= area.right(); ++col) {
                    const double confidence = scan.saliency[r][col] - threshold;
                    if (confidence <= *score) continue;
                    *score = confidence;
                    const dlib::rectangle rect = features.feats_to_image(dlib::centered_rect(dlib::point(col, r), boxWidth, boxHeight),
                                                                         cell, windowHeight, windowWidth);
                    // Back to the frame: frame = centre + R(angle) * (patch - half) / scale.
                    const dlib::dpoint at = dlib::center(dlib::drectangle(rect)) - dlib::dpoint(half, half);
                    const double x = cx + (c * at.x() - s * at.y()) / scale, y = cy + (s * at.x() + c * at.y()) / scale;
                    const double size = rect.width() / scale;
                    *found = {static_cast<float>(x - (size - 1) / 2), static_cast<float>(y - (size - 1) / 2),
                              static_cast<float>(size), static_cast<float>(size)};
                }
            }
        }
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("face search failed: ") + e.what());
        return -1;
    }
}

fv_landmark_model *fv_landmark_model_load(const char *model_path, char **error) {
    std::ifstream probe(model_path, std::ios::binary);
    if (!probe) {
        report(error, std::string("cannot open the landmark model ") + model_path + ": " + std::strerror(errno));
        return nullptr;
    }
    probe.close();
    fv_landmark_model *model = nullptr;
    try {
        model = new fv_landmark_model();
        // The layout dlib::serialize(shape_predictor) writes.
        int version = 0;
        std::ifstream in(model_path, std::ios::binary);
        dlib::deserialize(version, in);
        if (version != 1) throw dlib::serialization_error("unknown shape predictor version " + std::to_string(version));
        dlib::deserialize(model->initialShape, in);
        model->levels = readCascade(in, model->initialShape.size(), model->leafValues);
        dlib::deserialize(model->anchors, in);
        dlib::deserialize(model->deltas, in);
        if (model->levels.empty() || model->anchors.size() != model->levels.size() ||
            model->deltas.size() != model->levels.size()) {
            throw dlib::serialization_error("inconsistent cascade");
        }
        for (size_t level = 0; level < model->levels.size(); ++level) {
            const size_t features = model->deltas[level].size();
            if (model->anchors[level].size() != features) throw dlib::serialization_error("inconsistent feature anchors");
            for (const auto &split : model->levels[level].splits) {
                if (split.a >= features || split.b >= features) throw dlib::serialization_error("split outside the features");
            }
            for (unsigned long anchor : model->anchors[level]) {
                if (anchor >= static_cast<unsigned long>(FV_LANDMARK_COUNT)) throw dlib::serialization_error("feature anchor outside the shape");
            }
            model->mostFeatures = std::max(model->mostFeatures, features);
            model->mostTrees = std::max(model->mostTrees, model->levels[level].trees);
        }
    } catch (const std::exception &e) {
        delete model;
        report(error, std::string("the landmark model ") + model_path + " is not a dlib shape predictor: " + e.what());
        return nullptr;
    }
    long parts = model->initialShape.size() / 2;
    if (parts != FV_LANDMARK_COUNT) {
        delete model;
        report(error, std::string("the landmark model ") + model_path + " has " + std::to_string(parts) + " points, not 68");
        return nullptr;
    }
    return model;
}

void fv_landmark_model_destroy(fv_landmark_model *model) { delete model; }

fv_fitter *fv_fitter_create(const fv_landmark_model *model, char **error) {
    if (!model) {
        report(error, "cannot create a landmark fitter without a landmark model");
        return nullptr;
    }
    try {
        auto *fitter = new fv_fitter();
        fitter->model = model;
        fitter->shape.set_size(model->initialShape.size());
        fitter->features.reserve(model->mostFeatures);
        fitter->sum.assign(static_cast<size_t>(model->initialShape.size()), 0);
        fitter->leafOfTree.assign(model->mostTrees, 0);
        return fitter;
    } catch (const std::exception &e) {
        report(error, std::string("cannot create a landmark fitter: ") + e.what());
        return nullptr;
    }
}

void fv_fitter_destroy(fv_fitter *fitter) { delete fitter; }

int fv_fit_landmarks(fv_fitter *fitter, const uint8_t *grey, int width, int height, int stride,
                     fv_box box, float angle, fv_point landmarks[FV_LANDMARK_COUNT], char **error) {
    try {
        if (width < 1 || height < 1) {
            report(error, "landmark fit failed: empty image");
            return -1;
        }
        // The model is shared with other fitters, possibly on other threads: read it, never write it.
        const fv_landmark_model &model = *fitter->model;
        const dlib::point_transform_affine toImage = unnormalizing(box, angle);
        dlib::matrix<float, 0, 1> &shape = fitter->shape;
        shape = model.initialShape;
        std::vector<float> &features = fitter->features;
        const float (&m)[4] = fitter->similarity;
        for (size_t level = 0; level < model.levels.size(); ++level) {
            // Where the sampled pixels of this level sit, relative to the current shape.
            similarity(model.initialShape, shape, fitter->similarity);
            const auto &anchors = model.anchors[level];
            const auto &deltas = model.deltas[level];
            features.resize(deltas.size());
            for (size_t i = 0; i < deltas.size(); ++i) {
                const dlib::vector<float, 2> d = deltas[i];
                const dlib::vector<float, 2> at(m[0] * d.x() + m[1] * d.y() + shape(2 * anchors[i]),
                                                m[2] * d.x() + m[3] * d.y() + shape(2 * anchors[i] + 1));
                // Outside the frame the border pixel is read, as if the frame went on: a face at
                // the edge is fitted from what is visible, not pulled towards a black margin.
                // Rounded inline (floor of x + 0.5: lround's result wherever the clamp keeps it),
                // not through libm's lround, a call per sample.
                const dlib::dpoint p = toImage(at);
                const long x = std::clamp(static_cast<long>(std::floor(p.x() + 0.5)), 0L, static_cast<long>(width - 1));
                const long y = std::clamp(static_cast<long>(std::floor(p.y() + 0.5)), 0L, static_cast<long>(height - 1));
                features[i] = grey[y * stride + x];
            }
            const fv_level &cascade = model.levels[level];
            const size_t values = static_cast<size_t>(shape.size()), leaves = cascade.splitsPerTree + 1;
            float *sum = fitter->sum.data();
            std::fill(sum, sum + values, 0.0f);
            // Every tree's leaf first, then their updates, fetched a few trees ahead: the leaves are
            // scattered over the whole model, and waiting for each in turn is most of a fit's time.
            uint32_t *leafOfTree = fitter->leafOfTree.data();
            for (size_t tree = 0; tree < cascade.trees; ++tree) {
                const fv_level::split *splits = cascade.splits.data() + tree * cascade.splitsPerTree;
                size_t node = 0;
                // Without a branch: which way a split goes is a coin toss the branch predictor
                // loses half the time, and without branches the trees' walks overlap.
                while (node < cascade.splitsPerTree) {
                    const fv_level::split &s = splits[node];
                    node = 2 * node + 2 - static_cast<size_t>(features[s.a] - features[s.b] > s.threshold);
                }
                leafOfTree[tree] = static_cast<uint32_t>(tree * leaves + node - cascade.splitsPerTree);
            }
            constexpr size_t ahead = 8;
            const auto prefetch = [&](size_t tree) {
                const char *update = reinterpret_cast<const char *>(cascade.leaves + leafOfTree[tree] * values);
                for (size_t byte = 0; byte < values * sizeof(LeafValue); byte += 64) __builtin_prefetch(update + byte);
            };
            for (size_t tree = 0; tree < std::min(ahead, cascade.trees); ++tree) prefetch(tree);
            for (size_t tree = 0; tree < cascade.trees; ++tree) {
                if (tree + ahead < cascade.trees) prefetch(tree + ahead);
                const size_t leaf = leafOfTree[tree];
                const LeafValue *update = cascade.leaves + leaf * values;
                const float scale = cascade.scales[leaf];
                for (size_t k = 0; k < values; ++k) sum[k] += scale * static_cast<float>(update[k]);
            }
            for (size_t k = 0; k < values; ++k) shape(k) += sum[k];
        }
        for (int i = 0; i < FV_LANDMARK_COUNT; ++i) {
            const dlib::dpoint p = toImage(dlib::dpoint(shape(2 * i), shape(2 * i + 1)));
            landmarks[i] = {static_cast<float>(p.x()), static_cast<float>(p.y())};
        }
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("landmark fit failed: ") + e.what());
        return -1;
    }
}

fv_pose_solver *fv_pose_solver_create(char **error) {
    try {
        auto *solver = new fv_pose_solver();
        solver->model.assign(std::begin(kPoseModel), std::end(kPoseModel));
        solver->image.resize(solver->model.size());
        return solver;
    } catch (const std::exception &e) {
        report(error, std::string("cannot create the pose solver: ") + e.what());
        return nullptr;
    }
}

void fv_pose_solver_destroy(fv_pose_solver *solver) { delete solver; }

int fv_solve_pose(fv_pose_solver *solver, const fv_point landmarks[FV_LANDMARK_COUNT], int frame_width,
                  int frame_height, const fv_pose *previous, fv_pose *pose, char **error) {
    try {
        // Seeded by the previous pose (every tracked frame after a face's first): refined here,
        // without allocating.
        if (previous) {
            double image[kPosePoints][2];
            for (int i = 0; i < kPosePoints; ++i) {
                image[i][0] = landmarks[kPoseLandmarks[i]].x;
                image[i][1] = landmarks[kPoseLandmarks[i]].y;
            }
            double rotation[9], translation[3];
            std::copy(std::begin(previous->rotation), std::end(previous->rotation), rotation);
            std::copy(std::begin(previous->translation), std::end(previous->translation), translation);
            if (refinePose(image, frame_width, frame_width / 2.0, frame_height / 2.0, rotation, translation)) {
                std::copy(std::begin(rotation), std::end(rotation), pose->rotation);
                std::copy(std::begin(translation), std::end(translation), pose->translation);
                poseAngles(pose);
                return 0;
            }
        }
        // A face's first pose, or a seed that failed: solvePnP from scratch (its linear start).
        for (size_t i = 0; i < solver->model.size(); ++i) {
            const fv_point &p = landmarks[kPoseLandmarks[i]];
            solver->image[i] = {p.x, p.y};
        }
        auto &camera = solver->camera;
        camera.at<double>(0, 0) = camera.at<double>(1, 1) = frame_width;
        camera.at<double>(0, 2) = frame_width / 2.0;
        camera.at<double>(1, 2) = frame_height / 2.0;
        camera.at<double>(2, 2) = 1;
        if (!cv::solvePnP(solver->model, solver->image, camera, solver->distortion, solver->rotationVector,
                          solver->translation, false, cv::SOLVEPNP_ITERATIVE)) {
            return 1;
        }
        cv::Rodrigues(solver->rotationVector, solver->rotation);
        const cv::Mat &r = solver->rotation;
        for (int i = 0; i < 9; ++i) pose->rotation[i] = r.at<double>(i / 3, i % 3);
        for (int i = 0; i < 3; ++i) pose->translation[i] = solver->translation.at<double>(i);
        poseAngles(pose);
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("head pose failed: ") + e.what());
        return -1;
    }
}

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
    warpAffineReplicate(grey, width, height, static_cast<size_t>(stride), patch, side, static_cast<size_t>(side), map);
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
