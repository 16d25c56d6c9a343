// Face detection, 68-point landmarks and head pose (dlib, OpenCV) behind a pure-C API.
//
// Images are 8-bit grey planes read in place: a frame's Y plane is passed with its stride and is
// never copied. Every handle is opaque. A call that can fail returns NULL or a negative number and,
// when `error` is not NULL, stores a message the caller frees with fv_free_error.
// A landmark model is read-only once loaded: any number of threads may fit with it at once, each
// through its own fitter. A detector, fitter or pose solver handle is used by one thread at a time;
// separate handles are independent.
#ifndef FACE_VISION_H
#define FACE_VISION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FV_LANDMARK_COUNT 68

typedef struct fv_point { float x, y; } fv_point;
typedef struct fv_box { float x, y, width, height; } fv_box;

/// Rotation (row-major 3x3) and translation of the generic 3D face model in camera coordinates
/// (x right, y down, z away from the camera, millimetres), and the same rotation as angles in
/// degrees: yaw about y, pitch about x, roll about z, applied as R = Rz(roll) Ry(yaw) Rx(pitch).
typedef struct fv_pose {
    double rotation[9];
    double translation[3];
    double yaw, pitch, roll;
} fv_pose;

typedef struct fv_detector fv_detector;
typedef struct fv_landmark_model fv_landmark_model;
typedef struct fv_fitter fv_fitter;
typedef struct fv_pose_solver fv_pose_solver;

/// dlib's HOG frontal face detector (no model file). Finds faces of about 80 pixels and larger.
fv_detector *fv_detector_create(char **error);
void fv_detector_destroy(fv_detector *detector);
/// Writes up to `capacity` face boxes scoring at least `minimum_score` (0 is dlib's default; higher
/// rejects more look-alikes such as faces printed on clothing), most confident first, and, when
/// `scores` is not NULL, their scores; returns how many, or -1 on error. Scans dlib's image pyramid
/// (the image, then each level 5/6 of the one above: boxes of about 73, 88, 105... pixels) from
/// level `first_level`, `level_count` levels (0: to the end). Every level's windows and scores are
/// those dlib's detector finds on the whole image at that level; levels outside the range are only
/// resampled, not scanned. On buffers kept in `detector`: once an image size has been scanned, a
/// scan allocates nothing unless it finds more windows than before.
int fv_detect(fv_detector *detector, const uint8_t *grey, int width, int height, int stride, double minimum_score,
              int first_level, int level_count, fv_box *boxes, double *scores, int capacity, char **error);
/// Whether fv_detect and fv_locate_face sum a window's whole filters only where its largest ones
/// leave it near the floor, or on a small image at every window (pruned_filters.h; the default, 1),
/// or run every filter over the image, as dlib does (0): what they find is compared in the tests.
void fv_detector_prune_filters(fv_detector *detector, int prune);

/// Looks for a face of the size of `box` (turned by `angle`, as in fv_fit_landmarks) within `reach`
/// box widths (0...1) of where it is, at the detector's finest scale: writes the detector's best
/// window there, as a box of the same kind, to `found`, and its score in fv_detect's units (0 is the
/// threshold) to `score`; when no window scores above -2, `found` is `box` and `score` -2. 0 on
/// success, -1 on error. A patch 1.5 times smaller than the frame or more is warped from the means of
/// the frame's blocks of that many pixels (fv_average_blocks), as dlib's pyramid sees a face through
/// the mean of many of its pixels. The patch it scans, its features, the block means and the
/// filters' outputs are kept in `detector`: after the first call with a given `reach`, a call
/// allocates nothing.
int fv_locate_face(fv_detector *detector, const uint8_t *grey, int width, int height, int stride,
                   fv_box box, float angle, float reach, fv_box *found, double *score, char **error);

/// dlib's 68-point shape predictor loaded from `model_path` (iBUG 300-W point order), about 18 MB.
/// Never written after this call returns: one model serves every fitter of the process.
fv_landmark_model *fv_landmark_model_load(const char *model_path, char **error);
/// Call only once every fitter made from the model is destroyed.
void fv_landmark_model_destroy(fv_landmark_model *model);

/// The scratch memory of one landmark fit (a few KB), for one tracker. Reads `model` and does not own
/// it: the model must outlive the fitter.
fv_fitter *fv_fitter_create(const fv_landmark_model *model, char **error);
void fv_fitter_destroy(fv_fitter *fitter);
/// Fits the 68 landmarks inside `box` (a face box as the detector draws it, on the upright face)
/// turned by `angle` radians (clockwise on the image) about its centre; where the fit reads outside
/// the image it reads the nearest border pixel. 0 on success, -1 on error. Writes only into
/// `fitter` and `landmarks`, and allocates nothing unless it fails.
int fv_fit_landmarks(fv_fitter *fitter, const uint8_t *grey, int width, int height, int stride,
                     fv_box box, float angle, fv_point landmarks[FV_LANDMARK_COUNT], char **error);

/// Head pose from landmarks and a generic 3D face model, for frames of the given size (focal length =
/// frame width, principal point at the centre): the pose that minimises the reprojection error of the
/// model's points, with every point in front of the camera. A face's first pose is the better of an
/// upright face refined and solvePnP's (which allocates, and is kept only if the face is in front of
/// the camera); a pose seeded by the previous one is refined in place with no allocation.
fv_pose_solver *fv_pose_solver_create(char **error);
void fv_pose_solver_destroy(fv_pose_solver *solver);
/// `previous` (may be NULL) seeds the solver for continuity between frames; a seed the refinement
/// cannot use (a model point behind the camera) falls back to a first pose. 0 when `pose` is written, 1
/// when neither start gives a pose (not an error), -1 on error.
int fv_solve_pose(fv_pose_solver *solver, const fv_point landmarks[FV_LANDMARK_COUNT], int frame_width,
                  int frame_height, const fv_pose *previous, fv_pose *pose, char **error);

/// Area-averaged downscale of a grey plane into `destination` (for detection on a smaller image);
/// 0 on success, -1 on error.
int fv_downscale(const uint8_t *source, int width, int height, int stride,
                 uint8_t *destination, int destination_width, int destination_height, char **error);

/// The mean of each block of `factor` x `factor` pixels of the image (of those inside it at its right
/// and bottom edges), as cv::resize with INTER_AREA gives where the sides divide by `factor`, into
/// `destination`, (width / factor) x (height / factor) rounded up; 0, or -1 on error.
int fv_average_blocks(const uint8_t *grey, int width, int height, int stride, int factor, uint8_t *destination, char **error);

/// The sampling fv_locate_face reads its patch with: cv::warpAffine(image, patch, forward,
/// INTER_LINEAR, BORDER_REPLICATE) into a `side` x `side` patch (1...256, rows `side` bytes apart),
/// `forward` mapping image to patch as a row-major 2x3 matrix; allocates nothing. 0, or -1 on error.
int fv_warp_patch(const uint8_t *grey, int width, int height, int stride, const double forward[6], uint8_t *patch,
                  int side, char **error);

/// The HOG features the detector scans, of the whole image: dlib's 31 planes of 8x8-pixel cells,
/// plane after plane into `features`, each `*rows` x `*columns`. Returns how many floats it wrote,
/// or -1 when `capacity` is too small (`*rows` and `*columns` still say what it needs) or on error.
long fv_hog_features(const uint8_t *grey, int width, int height, int stride, float *features, long capacity,
                     int *rows, int *columns, char **error);

/// One separable filter over a `rows` x `columns` plane of floats (row after row), as the detector's
/// scan runs it over a HOG plane: `row_taps` across, `column_taps` down. `out` (the same size) gets
/// the filtered plane with its border zeroed, or, with `add`, the whole windows' sums added to what
/// it holds. 0, or -1 on error.
int fv_separable_filter(const float *plane, int rows, int columns, const float *row_filter, int row_taps,
                        const float *column_filter, int column_taps, float *out, int add, char **error);

/// 1 when this build uses AVX2/FMA code paths, 0 for the portable build.
int fv_optimised_for_avx2(void);
void fv_free_error(char *error);

#ifdef __cplusplus
}
#endif

#endif
