// dlib's and OpenCV's own code, unchanged, for tests to compare the vision shim with: the stock face
// detector, the stock shape predictor and cv::warpAffine. Pure C; a call that fails returns a
// negative number or NULL and stores a message the caller frees with dr_free_error.
#ifndef DLIB_REFERENCE_H
#define DLIB_REFERENCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dr_detection {
    float x, y, width, height;
    double score;        // dlib's detection_confidence (0 is its threshold)
    int detector;        // which of the five weight vectors found it (0 frontal, 1-4 turned or tilted)
} dr_detection;

/// dlib::get_frontal_face_detector() on the image, as dlib's examples run it: every pyramid level,
/// windows from `adjust_threshold` up, most confident first. Returns how many (up to `capacity`).
int dr_detect(const uint8_t *grey, int width, int height, int stride, double adjust_threshold, dr_detection *detections,
              int capacity, char **error);

typedef struct dr_predictor dr_predictor;
/// dlib::shape_predictor deserialised from `path`.
dr_predictor *dr_predictor_load(const char *path, char **error);
void dr_predictor_destroy(dr_predictor *predictor);
/// The predictor's 68 points (x, y pairs) for the face in `box`, as dlib returns them (whole pixels).
int dr_fit(const dr_predictor *predictor, const uint8_t *grey, int width, int height, int stride, float x, float y,
           float box_width, float box_height, float points[136], char **error);

/// cv::warpAffine(image, patch, forward, size, INTER_LINEAR, BORDER_REPLICATE) into a side x side patch.
int dr_warp_affine(const uint8_t *grey, int width, int height, int stride, const double forward[6], uint8_t *patch, int side,
                   char **error);

/// cv::resize(image, out, (width / factor, height / factor), INTER_AREA): for sides that divide by
/// `factor`, the mean of each block of `factor` x `factor` pixels.
int dr_resize_area(const uint8_t *grey, int width, int height, int stride, int factor, uint8_t *out, char **error);

/// dlib::float_spatially_filter_image_separable over a `rows` x `columns` plane of floats, into `out`
/// or (`add`) added to what it holds, with dlib's own scratch image.
int dr_separable_filter(const float *plane, int rows, int columns, const float *row_filter, int row_taps,
                        const float *column_filter, int column_taps, float *out, int add, char **error);

/// dlib::extract_fhog_features(image, planes, 8) (cell size 8, no padding), plane after plane into
/// `features`, each `*rows` x `*columns`. Returns how many floats, or -1 when `capacity` is too small.
long dr_hog_features(const uint8_t *grey, int width, int height, int stride, float *features, long capacity, int *rows,
                     int *columns, char **error);

void dr_free_error(char *error);

#ifdef __cplusplus
}
#endif

#endif
