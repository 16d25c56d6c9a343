// What the shim's files share: the error report every C entry point ends in, a view of the
// caller's grey pixels for dlib, and the patch warp that the detector's search and fv_warp_patch use.
#ifndef FV_SHIM_SUPPORT_H
#define FV_SHIM_SUPPORT_H

#include "face_vision.h"

#include <dlib/opencv/cv_image.h>
#include <opencv2/core.hpp>

#include <cstdint>
#include <cstring>
#include <string>

namespace fv {

inline void report(char **error, const std::string &message) {
    if (error) *error = strdup(message.c_str());
}

// A view of caller-owned grey pixels, for dlib's generic image interface; no copy.
inline dlib::cv_image<unsigned char> view(const uint8_t *grey, int width, int height, int stride) {
    cv::Mat mat(height, width, CV_8UC1, const_cast<uint8_t *>(grey), static_cast<size_t>(stride));
    return dlib::cv_image<unsigned char>(mat);
}

// The largest patch fv_locate_face scans: its 80-pixel window plus a cell, and a box more on every side.
constexpr int kLargestPatch = 96 + 2 * 80;

// cv::warpAffine(frame, patch, forward, INTER_LINEAR, BORDER_REPLICATE) for 8-bit grey, to the bit
// (patch_warp.cpp); `side` at most kLargestPatch.
void warpAffineReplicate(const uint8_t *source, int width, int height, size_t stride, uint8_t *destination,
                         int side, size_t destinationStride, const double (&forward)[6]);

// The scratch averageBlocks needs, and its largest block: 255 rows of 255 still sum in 16 bits.
constexpr int kAveragingScratch = 4096, kLargestAveragingFactor = 255;

// The mean of each block of `factor` x `factor` pixels of the frame (of the pixels inside it, at its
// right and bottom edges), for the blocks `columns` x `rows` from block (`firstColumn`, `firstRow`),
// into `destination`, rows `columns` bytes apart; `columnSums` holds kAveragingScratch values of
// scratch; `factor` at most kLargestAveragingFactor.
void averageBlocks(const uint8_t *source, int width, int height, size_t stride, int factor, int firstColumn, int firstRow,
                   int columns, int rows, uint8_t *destination, uint16_t *columnSums);

}  // namespace fv

#endif
