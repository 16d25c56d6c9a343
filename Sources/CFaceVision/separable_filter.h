// One separable filter over one plane, as dlib's float_spatially_filter_image_separable applies it
// (the same rectangle of whole windows, the border zeroed or left, the result written or added to
// the output), in about 60 % of its time. The detector runs 30 of these for each of its five
// detectors over every pyramid level, and in dlib's code they were 40 % of a scan. dlib runs the
// row filter over the whole plane into a scratch plane, then the column filter over that. Here the
// column filter runs first, two output rows at a time (each input row loaded once for both), into
// two rows of sums that stay in cache, and the row filter runs over those into the output: the same
// products, with multiply-adds fused where the machine has them, so sums differ from dlib's in their
// last bits. `DlibReferenceTests.theSeparableFilterIsDlibs` compares the two.
#pragma once

#include <dlib/geometry/rectangle.h>
#include <dlib/image_transforms/assign_image.h>

#include <cstring>

namespace fv {

namespace separable {
// One AVX register of floats, or one SSE register in the portable build.
#ifdef __AVX__
constexpr long kLanes = 8;
#else
constexpr long kLanes = 4;
#endif
typedef float lanes __attribute__((vector_size(kLanes * sizeof(float))));
// The frontal face detector's filters are 10x10 cells: that size has its taps fixed at compile time.
constexpr long kDetectorTaps = 10;

inline lanes load(const float *p) {
    lanes v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store(float *p, lanes v) { std::memcpy(p, &v, sizeof v); }

// out[i] (= or +=) the sum over the taps of in[i + tap * step] * filter[tap], for i in [0, count).
// TAPS > 0 fixes the number of taps at compile time; 0 takes `taps`.
template <long TAPS>
inline void filter_line(const float *in, long step, const float *filter, long taps, float *out, long count, bool add) {
    const long n = TAPS > 0 ? TAPS : taps;
    long i = 0;
    for (; i + kLanes <= count; i += kLanes) {
        lanes even = {}, odd = {};
        long tap = 0;
        for (; tap + 1 < n; tap += 2) {
            even += load(in + i + tap * step) * filter[tap];
            odd += load(in + i + (tap + 1) * step) * filter[tap + 1];
        }
        if (tap < n) even += load(in + i + tap * step) * filter[tap];
        const lanes sum = even + odd;
        store(out + i, add ? load(out + i) + sum : sum);
    }
    for (; i < count; ++i) {
        float sum = 0;
        for (long tap = 0; tap < n; ++tap) sum += in[i + tap * step] * filter[tap];
        out[i] = add ? out[i] + sum : sum;
    }
}

inline void filter_line(const float *in, long step, const float *filter, long taps, float *out, long count, bool add) {
    if (taps == kDetectorTaps) filter_line<kDetectorTaps>(in, step, filter, taps, out, count, add);
    else filter_line<0>(in, step, filter, taps, out, count, add);
}

// The column sums of two consecutive output rows: `first` from input rows 0..TAPS-1 (`step` floats
// apart), `second` from rows 1..TAPS.
template <long TAPS>
inline void filter_two_rows(const float *in, long step, const float *filter, float *first, float *second, long count) {
    long i = 0;
    for (; i + kLanes <= count; i += kLanes) {
        lanes a = load(in + i) * filter[0], b = {};
        for (long tap = 1; tap < TAPS; ++tap) {
            const lanes row = load(in + i + tap * step);
            a += row * filter[tap];
            b += row * filter[tap - 1];
        }
        b += load(in + i + TAPS * step) * filter[TAPS - 1];
        store(first + i, a);
        store(second + i, b);
    }
    for (; i < count; ++i) {
        float a = 0, b = 0;
        for (long tap = 0; tap < TAPS; ++tap) {
            a += in[i + tap * step] * filter[tap];
            b += in[i + (tap + 1) * step] * filter[tap];
        }
        first[i] = a;
        second[i] = b;
    }
}
}  // namespace separable

/// `in` filtered by `column_filter` down and `row_filter` across, written to `out` (resized to
/// `in`) or added to it. `sums` holds two rows of column sums (an array2d on kept memory allocates
/// nothing once it has held the widest). Returns the rectangle of whole windows, as dlib does.
template <typename Plane, typename Filter>
dlib::rectangle filter_separable(const Plane &in, Plane &out, const Filter &row_filter, const Filter &column_filter, Plane &sums, bool add) {
    using namespace separable;
    const long rows = in.nr(), columns = in.nc(), row_taps = row_filter.size(), column_taps = column_filter.size();
    if (in.size() == 0) {
        out.clear();
        return dlib::rectangle();
    }
    out.set_size(rows, columns);
    const long first_row = column_taps / 2, first_column = row_taps / 2;
    const long last_row = rows - (column_taps - 1) / 2, last_column = columns - (row_taps - 1) / 2;
    const dlib::rectangle whole(first_column, first_row, last_column - 1, last_row - 1);
    if (!add) dlib::zero_border_pixels(out, whole);
    if (whole.is_empty()) return whole;
    sums.set_size(2, columns);
    float *upper = &sums[0][0], *lower = &sums[1][0];
    const long step = rows > 1 ? &in[1][0] - &in[0][0] : columns, width = last_column - first_column;
    long r = first_row;
    if (column_taps == kDetectorTaps) {
        for (; r + 1 < last_row; r += 2) {
            filter_two_rows<kDetectorTaps>(&in[r - first_row][0], step, &column_filter(0), upper, lower, columns);
            filter_line(upper, 1, &row_filter(0), row_taps, &out[r][first_column], width, add);
            filter_line(lower, 1, &row_filter(0), row_taps, &out[r + 1][first_column], width, add);
        }
    }
    for (; r < last_row; ++r) {
        filter_line(&in[r - first_row][0], step, &column_filter(0), column_taps, upper, columns, false);
        filter_line(upper, 1, &row_filter(0), row_taps, &out[r][first_column], width, add);
    }
    return whole;
}

}  // namespace fv
