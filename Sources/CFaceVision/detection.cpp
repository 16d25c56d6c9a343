// Face detection: dlib's frontal HOG detector over a frame's image pyramid (fv_detect), and on one
// upright patch around a box (fv_locate_face), on buffers kept between calls.
#include "face_vision.h"
#include "hog_features.h"
#include "kept_memory.h"
#include "pruned_filters.h"
#include "shim_support.h"

#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

using fv::report;
using fv::view;
using fv::kLargestPatch;

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

// What one image (a pyramid level, a patch) is scanned with: its HOG features, the extraction's
// scratch and the filters' outputs. dlib's scanner builds all of these on every call (77
// allocations per check of a fit); here they are kept, on blocks that serve every size up to the
// largest seen (kept_memory.h).
struct fv_patch_scan {
    dlib::array<fv::kept_plane> hog;
    fv::hog_workspace features;
    fv::kept_plane saliency, scratch;
};

// What fv_detect scans a frame with, kept between scans: the image of the level being scanned and
// of the one above it (each level is made from the one above), one level's scan buffers, and each
// weight vector's windows. Levels are scanned one after the other, so a frame's scan holds one
// level's features, not every level's (about 4 MB instead of 14 for 720p). dlib's object_detector
// keeps every level's features and builds the rest on every scan (about 140 allocations for a
// coarse scan of a 720p frame); kept, they are sized once per frame size.
struct fv_pyramid_scan {
    fv::kept_grey images[2];
    fv_patch_scan level;
    std::vector<std::vector<std::pair<double, dlib::rectangle>>> windows;
    std::vector<dlib::rect_detection> candidates;
    std::vector<dlib::point> wholeSums;  // the positions fv_pruned_filters sums whole on a level
};

// dlib ships its frontal detector compressed and decompresses it on every call, about 0.4 s of
// CPU: a process (and every stream that starts in `serve`) copies one decompressed the first time.
// The shared detector and filters below are made once and never destroyed: a detection thread
// may still be scanning while the process exits (a stream ending as `serve` or `run` returns), and
// a static destroyed by `exit` would free the weights under that scan.
static const dlib::frontal_face_detector &frontalFaceDetector() {
    static const dlib::frontal_face_detector *const decompressed = new dlib::frontal_face_detector(dlib::get_frontal_face_detector());
    return *decompressed;
}

// The frontal detector's weight vectors as fv_pruned_filters, one per weight vector, made once.
static const std::vector<fv_pruned_filters> &frontalFaceFilters() {
    static const std::vector<fv_pruned_filters> *const filters = [] {
        auto *made = new std::vector<fv_pruned_filters>();
        const dlib::frontal_face_detector &detector = frontalFaceDetector();
        for (unsigned long d = 0; d < detector.num_detectors(); ++d) made->emplace_back(detector.get_processed_w(d).get_detect_argument());
        return made;
    }();
    return *filters;
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
    fv_patch_scan patchScan;
    // The block means readPatch warps a patch from, made on the first patch that needs them.
    std::vector<uint8_t> averaged;
    std::vector<uint16_t> averagedColumnSums;
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

// What dlib::object_detector<scan_fhog_pyramid>::operator() does (scanner.load, then each weight
// vector's detect, then non-maximum suppression), so that the windows found and their scores are
// dlib's, but on `scan`'s buffers: nothing is allocated once a frame size has been scanned (beyond
// the first scan, the lists only grow when a scan finds more windows than any before). dlib makes
// every level's features, then runs each weight vector over all levels; here each level's features
// are made and every weight vector run on them before the next level, each weight vector's windows
// gathered in the same order as dlib's, so only one level's features are held at a time. With
// `pruned`, the filters run in two steps (pruned_filters.h), which leaves every score that reaches
// the floor as dlib's and skips most of the work on the rest. Only levels `firstLevel` up to (not
// including) `endLevel` are scanned: their images are made as dlib makes them, each from the one
// above, but the features and filters run on those levels alone.
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
    const long boxWidth = windowWidth - 2 * static_cast<long>(scanner.get_padding());
    const long boxHeight = windowHeight - 2 * static_cast<long>(scanner.get_padding());
    const dlib::default_fhog_feature_extractor &features = scanner.get_feature_extractor();
    if (scan.windows.size() < detector.num_detectors()) scan.windows.resize(detector.num_detectors());
    for (auto &windows : scan.windows) windows.clear();
    fv_patch_scan &at = scan.level;
    for (unsigned long level = 0; level < levels; ++level) {
        // impl::create_fhog_pyramid: each level's image from the one above.
        const fv::kept_grey &above = scan.images[(level + 1) % 2];
        fv::kept_grey &here = scan.images[level % 2];
        if (level == 1) down(image, here);
        if (level > 1) down(above, here);
        if (level < firstLevel) continue;
        if (level == 0) {
            fv::extract_hog_features(image, at.hog, at.features, cell, static_cast<int>(windowHeight), static_cast<int>(windowWidth));
        } else {
            fv::extract_hog_features(here, at.hog, at.features, cell, static_cast<int>(windowHeight), static_cast<int>(windowWidth));
        }
        if (at.hog.size() == 0) break;  // a level too small for the features, and every level after it
        // Each weight vector's detect (impl::detect_from_fhog_pyramid) on this level.
        for (unsigned long d = 0; d < detector.num_detectors(); ++d) {
            const auto &weights = detector.get_processed_w(d);
            const double floor = weights.w(scanner.get_num_dimensions()) + adjust;
            const dlib::rectangle area = pruned ? (*pruned)[d].apply(weights.get_detect_argument(), at.hog, floor, at.saliency, at.scratch, scan.wholeSums)
                                                : filterPatch(weights.get_detect_argument(), at);
            for (long r = area.top(); r <= area.bottom(); ++r) {
                for (long c = area.left(); c <= area.right(); ++c) {
                    if (at.saliency[r][c] < floor) continue;
                    dlib::rectangle window = features.feats_to_image(dlib::centered_rect(dlib::point(c, r), boxWidth, boxHeight),
                                                                     cell, windowHeight, windowWidth);
                    window = down.rect_up(window, level);
                    scan.windows[d].push_back(std::make_pair(at.saliency[r][c], window));
                }
            }
        }
    }
    // Each weight vector's windows sorted best first, as detect does.
    scan.candidates.clear();
    for (unsigned long d = 0; d < detector.num_detectors(); ++d) {
        const double threshold = detector.get_processed_w(d).w(scanner.get_num_dimensions());
        std::sort(scan.windows[d].rbegin(), scan.windows[d].rend(), dlib::impl::compare_pair_rect);
        for (const auto &window : scan.windows[d]) {
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

namespace {
// The most blocks a side readPatch averages: a patch of kLargestPatch turned 45 degrees covers 1.42
// times its side, and a patch pixel covers at most 1.25 blocks (2.49 frame pixels, averaged in blocks
// of 2), so 1.42 * 1.25 * 256 and the blocks at the edges: 458.
constexpr int kLargestAveraged = kLargestPatch * 2;

// The patch at `forward` (frame to patch, `scale` patch pixels a frame pixel) as dlib's scan would see
// the face: dlib scans a pyramid whose every level is the one above resized to 5/6 with bilinear
// weights, so a face several levels down is seen through the mean of many of its pixels. One bilinear
// warp straight from the frame reads four pixels per patch pixel whatever the scale, and keeps their
// sensor noise: a face of 140 px or more under sigma-6 noise scored 0.53 below dlib's scan of the
// same window on average (DlibReferenceTests). Where the patch is at least 1.5 times smaller than the
// frame, it is warped from the means of blocks of that many pixels (rounded) instead.
void readPatch(fv_detector &detector, const uint8_t *grey, int width, int height, int stride, const double (&forward)[6],
               double scale, int side, cv::Mat &patch) {
    const int factor = scale < 1 ? static_cast<int>(std::min<long>(std::lround(1 / scale), fv::kLargestAveragingFactor)) : 1;
    if (factor >= 2) {
        // The blocks under the patch's corners (frame = forward^-1 * patch), and one more on each side
        // for the bilinear weights.
        const double det = forward[0] * forward[4] - forward[1] * forward[3];
        double minX = 1e300, maxX = -1e300, minY = 1e300, maxY = -1e300;
        for (const double px : {0.0, side - 1.0}) {
            for (const double py : {0.0, side - 1.0}) {
                const double dx = px - forward[2], dy = py - forward[5];
                const double fx = (forward[4] * dx - forward[1] * dy) / det, fy = (-forward[3] * dx + forward[0] * dy) / det;
                minX = std::min(minX, fx); maxX = std::max(maxX, fx);
                minY = std::min(minY, fy); maxY = std::max(maxY, fy);
            }
        }
        const int blocksAcross = (width + factor - 1) / factor, blocksDown = (height + factor - 1) / factor;
        const int firstColumn = std::max(0, static_cast<int>(std::floor(minX / factor)) - 1);
        const int lastColumn = std::min(blocksAcross - 1, static_cast<int>(std::floor(maxX / factor)) + 1);
        const int firstRow = std::max(0, static_cast<int>(std::floor(minY / factor)) - 1);
        const int lastRow = std::min(blocksDown - 1, static_cast<int>(std::floor(maxY / factor)) + 1);
        const int columns = lastColumn - firstColumn + 1, rows = lastRow - firstRow + 1;
        if (columns >= 1 && rows >= 1 && columns <= kLargestAveraged && rows <= kLargestAveraged) {
            if (detector.averaged.empty()) {
                detector.averaged.resize(static_cast<size_t>(kLargestAveraged) * kLargestAveraged);
                detector.averagedColumnSums.resize(fv::kAveragingScratch);
            }
            fv::averageBlocks(grey, width, height, static_cast<size_t>(stride), factor, firstColumn, firstRow, columns, rows,
                              detector.averaged.data(), detector.averagedColumnSums.data());
            // A block's mean stands at its centre: frame = factor * block + firstBlock * factor + (factor - 1) / 2.
            const double offsetX = factor * firstColumn + (factor - 1) / 2.0, offsetY = factor * firstRow + (factor - 1) / 2.0;
            const double fromBlocks[6] = {
                forward[0] * factor, forward[1] * factor, forward[2] + forward[0] * offsetX + forward[1] * offsetY,
                forward[3] * factor, forward[4] * factor, forward[5] + forward[3] * offsetX + forward[4] * offsetY};
            fv::warpAffineReplicate(detector.averaged.data(), columns, rows, static_cast<size_t>(columns), patch.data, side, patch.step, fromBlocks);
            return;
        }
    }
    fv::warpAffineReplicate(grey, width, height, static_cast<size_t>(stride), patch.data, side, patch.step, forward);
}
}  // namespace

int fv_locate_face(fv_detector *detector, const uint8_t *grey, int width, int height, int stride,
                   fv_box box, float angle, float reach, fv_box *found, double *score, char **error) {
    try {
        // The patch is the box turned upright and scaled to the side of the detector's boxes, with
        // `reach` boxes more on every side (the frame's border pixels replicated beyond its edge, and
        // the cells there emptied below), in whole cells of 8 pixels around the detector's 80-pixel
        // window.
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
        readPatch(*detector, grey, width, height, stride, forward, scale, sideInPixels, patch);
        fv_patch_scan &scan = detector->patchScan;
        // What the single-level detector does (dlib's object_detector over scan_fhog_pyramid, one
        // pyramid level: features, then each of its filters), on buffers kept between calls; only
        // the best window is wanted, so dlib's non-maximum suppression, which always keeps the best,
        // is left out.
        const auto &scanner = detector->singleLevel.get_scanner();
        const int cell = static_cast<int>(scanner.get_cell_size());
        const long windowWidth = static_cast<long>(scanner.get_fhog_window_width());
        const long windowHeight = static_cast<long>(scanner.get_fhog_window_height());
        fv::extract_hog_features(dlib::cv_image<unsigned char>(patch), scan.hog, scan.features, cell, static_cast<int>(windowHeight), static_cast<int>(windowWidth));
        *score = floor;
        *found = box;
        if (scan.hog.size() == 0) return 0;  // a patch too small for one window
        // Frame = centre + R(angle) * (patch - half) / scale.
        const auto toFrame = [&](dlib::dpoint inPatch) {
            const dlib::dpoint at = inPatch - dlib::dpoint(half, half);
            return dlib::dpoint(cx + (c * at.x() - s * at.y()) / scale, cy + (s * at.x() + c * at.y()) / scale);
        };
        // Cells whose centre lies beyond the frame's edge hold no features, as beyond the image in
        // dlib's scan, whose feature planes are padded with zeros: taken from the edge's pixels
        // repeated, they left 14 of 64 faces cut by the edge that dlib's scan finds unconfirmed,
        // 4 without (DlibReferenceTests).
        const auto outside = [&](dlib::dpoint at) { return at.x() < 0 || at.y() < 0 || at.x() >= width || at.y() >= height; };
        if (outside(toFrame({0, 0})) || outside(toFrame({side - 1, 0})) || outside(toFrame({0, side - 1})) ||
            outside(toFrame({side - 1, side - 1}))) {
            for (long r = 0; r < scan.hog[0].nr(); ++r) {
                for (long col = 0; col < scan.hog[0].nc(); ++col) {
                    const dlib::point at = dlib::fhog_to_image(dlib::point(col, r), cell, static_cast<int>(windowHeight), static_cast<int>(windowWidth));
                    if (!outside(toFrame(dlib::dpoint(at)))) continue;
                    for (unsigned long plane = 0; plane < scan.hog.size(); ++plane) scan.hog[plane][r][col] = 0;
                }
            }
        }
        const long boxWidth = windowWidth - 2 * static_cast<long>(scanner.get_padding());
        const long boxHeight = windowHeight - 2 * static_cast<long>(scanner.get_padding());
        const dlib::default_fhog_feature_extractor &features = scanner.get_feature_extractor();
        // Only a window above the best so far can be the best, so each detector's filters need be
        // exact only there (pruned_filters.h); the floor is raised no further than the scores its
        // margin was measured on.
        const std::vector<fv_pruned_filters> &pruned = frontalFaceFilters();
        for (unsigned long d = 0; d < detector->singleLevel.num_detectors(); ++d) {
            const auto &weights = detector->singleLevel.get_processed_w(d);
            const double threshold = weights.w(scanner.get_num_dimensions());
            const double best = threshold + std::min(*score, fv_pruned_filters::kHighestFloor);
            const dlib::rectangle area = detector->pruneFilters
                ? pruned[d].apply(weights.get_detect_argument(), scan.hog, best, scan.saliency, scan.scratch, detector->pyramid.wholeSums)
                : filterPatch(weights.get_detect_argument(), scan);
            for (long r = area.top(); r <= area.bottom(); ++r) {
                for (long col = area.left(); col <= area.right(); ++col) {
                    const double confidence = scan.saliency[r][col] - threshold;
                    if (confidence <= *score) continue;
                    *score = confidence;
                    const dlib::rectangle rect = features.feats_to_image(dlib::centered_rect(dlib::point(col, r), boxWidth, boxHeight),
                                                                         cell, windowHeight, windowWidth);
                    const dlib::dpoint at = toFrame(dlib::center(dlib::drectangle(rect)));
                    const double size = rect.width() / scale;
                    *found = {static_cast<float>(at.x() - (size - 1) / 2), static_cast<float>(at.y() - (size - 1) / 2),
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

long fv_hog_features(const uint8_t *grey, int width, int height, int stride, float *features, long capacity,
                     int *rows, int *columns, char **error) {
    try {
        dlib::array<fv::kept_plane> planes;
        fv::hog_workspace workspace;
        fv::extract_hog_features(view(grey, width, height, stride), planes, workspace, 8, 1, 1);
        *rows = planes.size() > 0 ? static_cast<int>(planes[0].nr()) : 0;
        *columns = planes.size() > 0 ? static_cast<int>(planes[0].nc()) : 0;
        const long count = static_cast<long>(planes.size()) * *rows * *columns;
        if (count > capacity) {
            report(error, "the HOG features of a " + std::to_string(width) + "x" + std::to_string(height) + " image need " +
                              std::to_string(count) + " floats, " + std::to_string(capacity) + " given");
            return -1;
        }
        float *out = features;
        for (const auto &plane : planes) {
            for (long r = 0; r < plane.nr(); ++r) out = std::copy(&plane[r][0], &plane[r][0] + plane.nc(), out);
        }
        return count;
    } catch (const std::exception &e) {
        report(error, std::string("HOG features failed: ") + e.what());
        return -1;
    }
}

int fv_separable_filter(const float *plane, int rows, int columns, const float *row_filter, int row_taps,
                        const float *column_filter, int column_taps, float *out, int add, char **error) {
    if (rows < 1 || columns < 1 || row_taps < 1 || column_taps < 1) {
        report(error, "a separable filter needs a plane and taps of at least 1, not " + std::to_string(rows) + "x" +
                          std::to_string(columns) + " with " + std::to_string(row_taps) + "x" + std::to_string(column_taps) + " taps");
        return -1;
    }
    try {
        fv::kept_plane in, filtered, sums;
        in.set_size(rows, columns);
        filtered.set_size(rows, columns);
        for (long r = 0; r < rows; ++r) {
            std::copy(plane + r * columns, plane + (r + 1) * columns, &in[r][0]);
            std::copy(out + r * columns, out + (r + 1) * columns, &filtered[r][0]);
        }
        const dlib::matrix<float, 0, 1> across = dlib::mat(row_filter, row_taps), down = dlib::mat(column_filter, column_taps);
        fv::filter_separable(in, filtered, across, down, sums, add != 0);
        for (long r = 0; r < rows; ++r) std::copy(&filtered[r][0], &filtered[r][0] + columns, out + r * columns);
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("separable filter failed: ") + e.what());
        return -1;
    }
}

}  // extern "C"
