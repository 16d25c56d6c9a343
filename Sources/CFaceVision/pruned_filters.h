// A whole-frame scan's detector filters in two steps.
//
// dlib applies each of the frontal detector's five weight vectors as 54-66 separable filters (a row
// and a column pass over one HOG plane each) at every position of every pyramid level: half of a
// scan (in the fine scan of a 720p frame, three levels from 1168x657, 24 ms against 22 ms for the
// HOG features; 15.5 ms in two steps). Nearly every position scores far below a face, and the
// largest filters alone already place it there. So the first step runs only the kFirstFilters
// largest (by the sum of their weights' magnitudes) over the level, and the second sums the whole
// filter, at that position alone, only where the first step left a score within kMargin of the
// floor the scan keeps windows above. A position the first step leaves lower keeps its partial
// score, which the scan then passes over.
//
// The margin is a measured one: over every pyramid level of 43 frames of the quality benchmark's
// sequences and 8 photos of scikit-image's data (10 million positions, all five detectors), the 30
// largest filters underestimated a score within 3 of the threshold by at most 1.13; the margin is
// 2.2 times that. No score above the threshold was left out there, and 2 % of positions were summed
// whole. Where more than kMostWhole of a level's positions would be, the remaining filters run over
// the level as dlib runs them, so a scan never costs much more than dlib's own.
#pragma once

#include "separable_filter.h"

#include <dlib/image_processing.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

struct fv_pruned_filters {
    static constexpr size_t kFirstFilters = 30;
    static constexpr double kMargin = 2.5;
    static constexpr double kMostWhole = 0.15;
    // The highest floor above the threshold the margin holds for: the scores it was measured on.
    static constexpr double kHighestFloor = 3;

    struct separable { unsigned long plane, rank; };
    std::vector<separable> first, rest;
    // Per plane, the sum of its separable filters (the detector exactly as dlib applies it), row
    // by row, every plane's filter of one size: kernelRows x kernelColumns floats a plane.
    std::vector<float> whole;
    long kernelRows = 0, kernelColumns = 0;

    template <typename Filterbank> explicit fv_pruned_filters(const Filterbank &w) {
        std::vector<std::pair<float, separable>> bySize;
        kernelRows = w.filters[0].nr();
        kernelColumns = w.filters[0].nc();
        whole.assign(w.row_filters.size() * kernelRows * kernelColumns, 0.0f);
        for (unsigned long plane = 0; plane < w.row_filters.size(); ++plane) {
            if (w.filters[plane].nr() != kernelRows || w.filters[plane].nc() != kernelColumns) throw std::logic_error("filters of different sizes");
            dlib::matrix<float> sum = dlib::zeros_matrix<float>(kernelRows, kernelColumns);
            for (unsigned long rank = 0; rank < w.row_filters[plane].size(); ++rank) {
                const dlib::matrix<float> kernel = w.col_filters[plane][rank] * dlib::trans(w.row_filters[plane][rank]);
                sum += kernel;
                bySize.push_back({dlib::sum(dlib::abs(kernel)), {plane, rank}});
            }
            for (long y = 0; y < kernelRows; ++y) {
                for (long x = 0; x < kernelColumns; ++x) whole[(plane * kernelRows + y) * kernelColumns + x] = sum(y, x);
            }
        }
        std::stable_sort(bySize.begin(), bySize.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
        for (size_t i = 0; i < bySize.size(); ++i) (i < kFirstFilters ? first : rest).push_back(bySize[i].second);
    }

    // The saliency of every window of `hog` (in `saliency`), exact wherever it reaches `floor`;
    // returns the area of whole windows, as dlib's filters do.
    template <typename Filterbank, typename Planes, typename Plane>
    dlib::rectangle apply(const Filterbank &w, const Planes &hog, double floor, Plane &saliency, Plane &sums,
                          std::vector<dlib::point> &candidates) const {
        // One separable filter over the level, into `saliency` or added to it.
        const auto run = [&](const separable &f, bool add) {
            return fv::filter_separable(hog[f.plane], saliency, w.row_filters[f.plane][f.rank], w.col_filters[f.plane][f.rank], sums, add);
        };
        // On a small image (a check of a fit's patch holds 3x3 to 13x13 windows), summing the whole
        // filter at every window costs less than running even the first filters over the image.
        const long rows = hog.size() > 0 ? hog[0].nr() : 0, columns = hog.size() > 0 ? hog[0].nc() : 0;
        const dlib::rectangle windows(kernelColumns / 2, kernelRows / 2, columns - (kernelColumns - 1) / 2 - 1, rows - (kernelRows - 1) / 2 - 1);
        const double wholeCost = static_cast<double>(windows.area()) * kernelRows * kernelColumns * hog.size();
        const double firstCost = static_cast<double>(first.size()) * rows * columns * (kernelRows + kernelColumns);
        if (!windows.is_empty() && wholeCost <= firstCost) {
            saliency.set_size(rows, columns);
            dlib::assign_all_pixels(saliency, 0);
            for (long r = windows.top(); r <= windows.bottom(); ++r) {
                for (long c = windows.left(); c <= windows.right(); ++c) saliency[r][c] = wholeSum(hog, dlib::point(c, r));
            }
            return windows;
        }
        dlib::rectangle area;
        for (size_t i = 0; i < first.size(); ++i) area = run(first[i], i > 0);
        if (first.empty() || area.is_empty()) return area;
        candidates.clear();
        const float near = static_cast<float>(floor - kMargin);
        for (long r = area.top(); r <= area.bottom(); ++r) {
            for (long c = area.left(); c <= area.right(); ++c) {
                if (saliency[r][c] >= near) candidates.push_back(dlib::point(c, r));
            }
        }
        if (static_cast<double>(candidates.size()) > kMostWhole * static_cast<double>(area.area())) {
            for (const separable &f : rest) run(f, true);
            return area;
        }
        for (const dlib::point &p : candidates) saliency[p.y()][p.x()] = wholeSum(hog, p);
        return area;
    }

    // The whole filter's score of the window centred on `p`: products summed column by column
    // first (a sum per kernel column, which vectorises), then across the columns.
    template <typename Planes> float wholeSum(const Planes &hog, dlib::point p) const {
        constexpr long kWidest = 16;
        if (kernelColumns > kWidest) throw std::logic_error("filters wider than 16 cells");
        float columns[kWidest] = {};
        const long top = p.y() - kernelRows / 2, left = p.x() - kernelColumns / 2;
        const float *kernel = whole.data();
        for (unsigned long plane = 0; plane < hog.size(); ++plane) {
            for (long y = 0; y < kernelRows; ++y, kernel += kernelColumns) {
                const float *row = &hog[plane][top + y][left];
                for (long x = 0; x < kernelColumns; ++x) columns[x] += kernel[x] * row[x];
            }
        }
        float sum = 0;
        for (long x = 0; x < kernelColumns; ++x) sum += columns[x];
        return sum;
    }
};
