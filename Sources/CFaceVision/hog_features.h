// HOG features of an 8-bit grey image, as dlib's extract_fhog_features computes them
// (impl_extract_fhog_features in dlib/image_transforms/fhog.h, dlib 19.24, Boost Software License
// 1.0; the notice of the code it derives from is kept below), 2.3-3.3x faster than dlib's and with no
// allocation once the workspace is sized. The normalisation into the 31 features is dlib's code,
// unchanged; the orientation histograms that feed it are built differently, with the same values:
// - A pixel's orientation is a table lookup. dlib snaps each gradient to the nearest of 18
//   directions with 18 dot products and compares in a chain (most of its time); an 8-bit image has
//   only 511 x 511 gradients, so the table is filled once by that same comparison, and every pixel's
//   bin is exactly dlib's.
// - A pixel row's votes are spread across cells first (one row of cells, in cache), then added
//   into the two cell rows above and below it with the row's weights: two scattered additions a
//   pixel instead of four into the whole histogram.
// The two orders of adding round differently, by about 1e-7 of a feature (DlibReferenceTests
// .theHOGFeaturesAreDlibs compares every feature with dlib's on real photos).
#ifndef FV_HOG_FEATURES_H
#define FV_HOG_FEATURES_H

#include <dlib/image_transforms/fhog.h>

#include "kept_memory.h"

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace fv {

// What an extraction writes besides the features, kept between calls (kept_memory.h).
struct hog_workspace {
    kept_histograms hist;  // 18 orientations a cell, one cell of padding all round
    kept_plane norm;       // each cell's energy
    kept_plane votes;      // one pixel row's votes, spread across the cells of one cell row
    kept_plane magnitude;  // one pixel row's gradient lengths
    dlib::array2d<int32_t, kept_memory<char>> gradient;  // one pixel row's gradients, as table indices
    dlib::array2d<int32_t, kept_memory<char>> cell;      // each column's left cell (of hist)
    kept_plane rightShare; // each column's share of its vote that goes to the cell on the right
};

namespace hog {

constexpr int kGradients = 511;  // -255...255 in each direction

// The orientation bin (0-17) of every gradient of an 8-bit image, by dlib's own comparison: its
// SIMD code, so that rounding and ties fall as they do in dlib built with the same flags.
inline const std::vector<uint8_t> &orientationTable() {
    static const std::vector<uint8_t> table = [] {
        using namespace dlib;
        matrix<float, 2, 1> directions[9];
        directions[0] = 1.0000, 0.0000;
        directions[1] = 0.9397, 0.3420;
        directions[2] = 0.7660, 0.6428;
        directions[3] = 0.500, 0.8660;
        directions[4] = 0.1736, 0.9848;
        directions[5] = -0.1736, 0.9848;
        directions[6] = -0.5000, 0.8660;
        directions[7] = -0.7660, 0.6428;
        directions[8] = -0.9397, 0.3420;
        std::vector<uint8_t> bins(kGradients * kGradients);
        for (int gx = -255; gx <= 255; ++gx) {
            for (int gy = -255; gy <= 255; gy += 8) {
                simd8f grad_x(static_cast<float>(gx));
                simd8f grad_y(gy, gy + 1, gy + 2, gy + 3, gy + 4, gy + 5, gy + 6, gy + 7);
                simd8f best_dot = 0;
                simd8f best_o = 0;
                for (int o = 0; o < 9; o++) {
                    simd8f dot = grad_x * directions[o](0) + grad_y * directions[o](1);
                    simd8f_bool cmp = dot > best_dot;
                    best_dot = select(cmp, dot, best_dot);
                    dot *= -1;
                    best_o = select(cmp, o, best_o);
                    cmp = dot > best_dot;
                    best_dot = select(cmp, dot, best_dot);
                    best_o = select(cmp, o + 9, best_o);
                }
                int32 bin[8];
                simd8i(best_o).store(bin);
                for (int k = 0; k < 8 && gy + k <= 255; ++k) bins[(gx + 255) * kGradients + gy + k + 255] = static_cast<uint8_t>(bin[k]);
            }
        }
        return bins;
    }();
    return table;
}

}  // namespace hog

template <typename image_type, typename out_type>
void extract_hog_features(const image_type &image, out_type &hog, hog_workspace &work, int cell_size,
                          int filter_rows_padding, int filter_cols_padding) {
    using namespace dlib;
    using namespace dlib::impl_fhog;
    static_assert(std::is_same<typename image_traits<image_type>::pixel_type, unsigned char>::value,
                  "the orientation table covers the gradients of 8-bit grey images");
    if (cell_size == 1) {
        impl_extract_fhog_features_cell_size_1(image, hog, filter_rows_padding, filter_cols_padding);
        return;
    }
    const std::vector<uint8_t> &bins = hog::orientationTable();
    const long rows = num_rows(image), columns = num_columns(image);
    const int cells_nr = (int)((float)rows / (float)cell_size + 0.5);
    const int cells_nc = (int)((float)columns / (float)cell_size + 0.5);
    if (cells_nr == 0 || cells_nc == 0) {
        hog.clear();
        return;
    }
    array2d<matrix<float, 18, 1>, kept_memory<char>> &hist = work.hist;
    array2d<float, kept_memory<char>> &norm = work.norm;
    hist.set_size(cells_nr + 2, cells_nc + 2);
    for (long r = 0; r < hist.nr(); ++r) {
        for (long c = 0; c < hist.nc(); ++c) hist[r][c] = 0;
    }
    norm.set_size(cells_nr, cells_nc);
    assign_all_pixels(norm, 0);
    const int hog_nr = std::max(cells_nr - 2, 0);
    const int hog_nc = std::max(cells_nc - 2, 0);
    if (hog_nr == 0 || hog_nc == 0) {
        hog.clear();
        return;
    }
    const int padding_rows_offset = (filter_rows_padding - 1) / 2;
    const int padding_cols_offset = (filter_cols_padding - 1) / 2;
    init_hog(hog, hog_nr, hog_nc, filter_rows_padding, filter_cols_padding);

    const int visible_nr = std::min((long)cells_nr * cell_size, rows) - 1;
    const int visible_nc = std::min((long)cells_nc * cell_size, columns) - 1;

    // Each column's two cells and their shares, as dlib's SIMD loop computes them (its +0.5 is the
    // histogram's one cell of padding).
    work.cell.set_size(1, visible_nc);
    work.rightShare.set_size(1, visible_nc);
    int32_t *cell = &work.cell[0][0];
    float *rightShare = &work.rightShare[0][0];
    for (int x = 1; x < visible_nc; ++x) {
        const float xp = ((float)x + 0.5f) / (float)cell_size + 0.5f;
        cell[x] = (int32_t)xp;
        rightShare[x] = xp - (float)cell[x];
    }
    const long rowVotes = (long)(cells_nc + 2) * 18;
    work.votes.set_size(1, rowVotes);
    work.magnitude.set_size(1, visible_nc);
    work.gradient.set_size(1, visible_nc);
    float *votes = &work.votes[0][0];
    float *magnitude = &work.magnitude[0][0];
    int32_t *gradient = &work.gradient[0][0];
    const uint8_t *pixels = static_cast<const uint8_t *>(image_data(image));
    const long stride = width_step(image);

    for (int y = 1; y < visible_nr; y++) {
        const uint8_t *above = pixels + (y - 1) * stride, *here = pixels + y * stride, *below = pixels + (y + 1) * stride;
        // Gradients and their lengths, a loop the compiler vectorises.
        for (int x = 1; x < visible_nc; ++x) {
            const int32_t gx = (int32_t)here[x + 1] - (int32_t)here[x - 1];
            const int32_t gy = (int32_t)below[x] - (int32_t)above[x];
            magnitude[x] = std::sqrt((float)(gx * gx + gy * gy));
            gradient[x] = (gx + 255) * hog::kGradients + gy + 255;
        }
        // Each pixel's vote into its orientation in the cells left and right of it.
        std::fill(votes, votes + rowVotes, 0.0f);
        for (int x = 1; x < visible_nc; ++x) {
            float *at = votes + cell[x] * 18 + bins[gradient[x]];
            const float right = rightShare[x] * magnitude[x];
            at[0] += magnitude[x] - right;
            at[18] += right;
        }
        // The row's votes into the cell rows above and below it.
        const float yp = ((float)y + 0.5) / (float)cell_size - 0.5;
        const int iyp = (int)std::floor(yp);
        const float vy0 = yp - iyp;
        const float vy1 = 1.0 - vy0;
        float *upper = &hist[iyp + 1][0](0);
        float *lower = &hist[iyp + 2][0](0);
        for (long k = 0; k < rowVotes; ++k) {
            upper[k] += vy1 * votes[k];
            lower[k] += vy0 * votes[k];
        }
    }

    // From here on dlib's code, unchanged.
    /*
        This function implements the HOG feature extraction method described in
        the paper:
            P. Felzenszwalb, R. Girshick, D. McAllester, D. Ramanan
            Object Detection with Discriminatively Trained Part Based Models
            IEEE Transactions on Pattern Analysis and Machine Intelligence, Vol. 32, No. 9, Sep. 2010

        Moreover, this function is derived from the HOG feature extraction code
        from the features.cc file in the voc-releaseX code (see
        http://people.cs.uchicago.edu/~rbg/latent/) which is has the following
        license (note that the code has been modified to work with grayscale and
        color as well as planar and interlaced input and output formats):

        Copyright (C) 2011, 2012 Ross Girshick, Pedro Felzenszwalb
        Copyright (C) 2008, 2009, 2010 Pedro Felzenszwalb, Ross Girshick
        Copyright (C) 2007 Pedro Felzenszwalb, Deva Ramanan

        Permission is hereby granted, free of charge, to any person obtaining
        a copy of this software and associated documentation files (the
        "Software"), to deal in the Software without restriction, including
        without limitation the rights to use, copy, modify, merge, publish,
        distribute, sublicense, and/or sell copies of the Software, and to
        permit persons to whom the Software is furnished to do so, subject to
        the following conditions:

        The above copyright notice and this permission notice shall be
        included in all copies or substantial portions of the Software.

        THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
        EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
        MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
        NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE
        LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION
        OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION
        WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
    */

    // compute energy in each block by summing over orientations
    for (int r = 0; r < cells_nr; ++r) {
        for (int c = 0; c < cells_nc; ++c) {
            for (int o = 0; o < 9; o++) {
                norm[r][c] += (hist[r + 1][c + 1](o) + hist[r + 1][c + 1](o + 9)) * (hist[r + 1][c + 1](o) + hist[r + 1][c + 1](o + 9));
            }
        }
    }

    const float eps = 0.0001;
    // compute features
    for (int y = 0; y < hog_nr; y++) {
        const int yy = y + padding_rows_offset;
        for (int x = 0; x < hog_nc; x++) {
            const simd4f z1(norm[y + 1][x + 1], norm[y][x + 1], norm[y + 1][x], norm[y][x]);
            const simd4f z2(norm[y + 1][x + 2], norm[y][x + 2], norm[y + 1][x + 1], norm[y][x + 1]);
            const simd4f z3(norm[y + 2][x + 1], norm[y + 1][x + 1], norm[y + 2][x], norm[y + 1][x]);
            const simd4f z4(norm[y + 2][x + 2], norm[y + 1][x + 2], norm[y + 2][x + 1], norm[y + 1][x + 1]);

            const simd4f nn = 0.2 * sqrt(z1 + z2 + z3 + z4 + eps);
            const simd4f n = 0.1 / nn;

            simd4f t = 0;

            const int xx = x + padding_cols_offset;

            // contrast-sensitive features
            for (int o = 0; o < 18; o += 3) {
                simd4f temp0(hist[y + 1 + 1][x + 1 + 1](o));
                simd4f temp1(hist[y + 1 + 1][x + 1 + 1](o + 1));
                simd4f temp2(hist[y + 1 + 1][x + 1 + 1](o + 2));
                simd4f h0 = min(temp0, nn) * n;
                simd4f h1 = min(temp1, nn) * n;
                simd4f h2 = min(temp2, nn) * n;
                set_hog(hog, o, xx, yy, sum(h0));
                set_hog(hog, o + 1, xx, yy, sum(h1));
                set_hog(hog, o + 2, xx, yy, sum(h2));
                t += h0 + h1 + h2;
            }

            t *= 2 * 0.2357;

            // contrast-insensitive features
            for (int o = 0; o < 9; o += 3) {
                simd4f temp0 = hist[y + 1 + 1][x + 1 + 1](o) + hist[y + 1 + 1][x + 1 + 1](o + 9);
                simd4f temp1 = hist[y + 1 + 1][x + 1 + 1](o + 1) + hist[y + 1 + 1][x + 1 + 1](o + 9 + 1);
                simd4f temp2 = hist[y + 1 + 1][x + 1 + 1](o + 2) + hist[y + 1 + 1][x + 1 + 1](o + 9 + 2);
                simd4f h0 = min(temp0, nn) * n;
                simd4f h1 = min(temp1, nn) * n;
                simd4f h2 = min(temp2, nn) * n;
                set_hog(hog, o + 18, xx, yy, sum(h0));
                set_hog(hog, o + 18 + 1, xx, yy, sum(h1));
                set_hog(hog, o + 18 + 2, xx, yy, sum(h2));
            }

            float temp[4];
            t.store(temp);

            // texture features
            set_hog(hog, 27, xx, yy, temp[0]);
            set_hog(hog, 28, xx, yy, temp[1]);
            set_hog(hog, 29, xx, yy, temp[2]);
            set_hog(hog, 30, xx, yy, temp[3]);
        }
    }
}

}  // namespace fv

#endif
