// Head pose from six landmarks against a generic face model: refined from the previous frame's
// pose without allocating, or solved afresh by OpenCV's solvePnP.
#include "face_vision.h"
#include "shim_support.h"

#include <opencv2/calib3d.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

using fv::report;

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

// The residuals (projected - observed) of a pose's model points and their squared sum, or -1 when a
// point lies behind the camera or a number is not finite.
double reprojection(const double (&image)[kPosePoints][2], double f, double cx, double cy, const double (&r)[9],
                    const double (&t)[3], double (&res)[2 * kPosePoints]) {
    double sum = 0;
    for (int i = 0; i < kPosePoints; ++i) {
        const cv::Point3d &m = kPoseModel[i];
        const double x = r[0] * m.x + r[1] * m.y + r[2] * m.z + t[0];
        const double y = r[3] * m.x + r[4] * m.y + r[5] * m.z + t[1];
        const double z = r[6] * m.x + r[7] * m.y + r[8] * m.z + t[2];
        if (!(z > 1e-6)) return -1;
        res[2 * i] = f * x / z + cx - image[i][0];
        res[2 * i + 1] = f * y / z + cy - image[i][1];
        sum += res[2 * i] * res[2 * i] + res[2 * i + 1] * res[2 * i + 1];
    }
    return std::isfinite(sum) ? sum : -1;
}

// The rotation by the angle of cosine c and sine s about the unit axis (kx, ky, kz), row-major:
// Rodrigues' formula.
void rotationAbout(double kx, double ky, double kz, double c, double s, double (&e)[9]) {
    const double v = 1 - c;
    e[0] = c + kx * kx * v; e[1] = kx * ky * v - kz * s; e[2] = kx * kz * v + ky * s;
    e[3] = ky * kx * v + kz * s; e[4] = c + ky * ky * v; e[5] = ky * kz * v - kx * s;
    e[6] = kz * kx * v - ky * s; e[7] = kz * ky * v + kx * s; e[8] = c + kz * kz * v;
}

// Refines a pose seeded by the face's previous one: Levenberg-Marquardt on the reprojection error of
// the model's points, the objective solvePnP's iterative method minimises, with the rotation updated
// as R <- exp([w]x) R. Everything lives on the stack: solvePnP allocates 160-210 blocks per call (its
// matrices and its solver's), and this runs on every tracked frame. False when the seed or a step
// puts a point behind the camera or leaves the numbers non-finite: the caller then solves afresh.
// `finalError`: the sum of squared reprojection errors where it stopped.
bool refinePose(const double (&image)[kPosePoints][2], double f, double cx, double cy, double (&rotation)[9],
                double (&translation)[3], double &finalError) {
    double r[9], t[3];
    std::copy(std::begin(rotation), std::end(rotation), r);
    std::copy(std::begin(translation), std::end(translation), t);
    double res[2 * kPosePoints];
    double error = reprojection(image, f, cx, cy, r, t, res);
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
                rotationAbout(step[0] / angle, step[1] / angle, step[2] / angle, std::cos(angle), std::sin(angle), e);
            }
            double nr[9], nt[3];
            for (int row = 0; row < 3; ++row) {
                for (int col = 0; col < 3; ++col) {
                    nr[row * 3 + col] = e[row * 3] * r[col] + e[row * 3 + 1] * r[3 + col] + e[row * 3 + 2] * r[6 + col];
                }
                nt[row] = t[row] + step[3 + row];
            }
            double nres[2 * kPosePoints];
            const double nerror = reprojection(image, f, cx, cy, nr, nt, nres);
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
                    finalError = error;
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
    finalError = error;
    return true;
}

// An upright face looking at the camera, turned in the image plane by its eye line, at the distance
// its outer eye corners' spacing gives and behind its nose tip (`image` in kPoseLandmarks' order: the
// nose tip first, the eye corners third and fourth): a start from which the refinement keeps every
// point in front of the camera.
void uprightStart(const double (&image)[kPosePoints][2], double f, double cx, double cy, double (&r)[9],
                  double (&t)[3]) {
    const double dx = image[3][0] - image[2][0], dy = image[3][1] - image[2][1];
    const double angle = std::atan2(dy, dx), eyes = std::max(std::hypot(dx, dy), 1.0);
    rotationAbout(0, 0, 1, std::cos(angle), std::sin(angle), r);
    const double z = f * (kPoseModel[3].x - kPoseModel[2].x) / eyes;
    t[0] = (image[0][0] - cx) * z / f;
    t[1] = (image[0][1] - cy) * z / f;
    t[2] = z;
}

// Yaw, pitch and roll of the head against the line of sight to it: of R' = V^T R = Rz(roll)
// Ry(yaw) Rx(pitch), where V turns the camera's axis onto the direction of the nose tip. A face
// that looks straight at the camera has no yaw or pitch wherever it is in the frame; against the
// camera's axis, a face looking at the camera from the frame's edge would be turned by the angle
// it is seen at (17 degrees 400 px from the centre of a 720p frame), and a face sliding from side
// to side while looking at the camera would seem to shake its head.
void poseAngles(fv_pose *pose) {
    const double *r = pose->rotation, *t = pose->translation;
    const double length = std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    double v[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (length > 0) {
        // (0, 0, 1) turned onto the unit direction d about their common normal, (0, 0, 1) x d.
        const double dx = t[0] / length, dy = t[1] / length, dz = t[2] / length;
        const double s = std::sqrt(dx * dx + dy * dy);
        if (s > 1e-12) rotationAbout(-dy / s, dx / s, 0, dz, s, v);
    }
    double rel[9];
    for (int row = 0; row < 3; ++row) {
        for (int col = 0; col < 3; ++col) {
            rel[row * 3 + col] = v[row] * r[col] + v[3 + row] * r[3 + col] + v[6 + row] * r[6 + col];
        }
    }
    pose->yaw = std::asin(std::clamp(-rel[6], -1.0, 1.0)) * kDegrees;
    pose->pitch = std::atan2(rel[7], rel[8]) * kDegrees;
    pose->roll = std::atan2(rel[3], rel[0]) * kDegrees;
}

}  // namespace

extern "C" {

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
        const double f = frame_width, cx = frame_width / 2.0, cy = frame_height / 2.0;
        double image[kPosePoints][2];
        for (int i = 0; i < kPosePoints; ++i) {
            image[i][0] = landmarks[kPoseLandmarks[i]].x;
            image[i][1] = landmarks[kPoseLandmarks[i]].y;
        }
        double rotation[9], translation[3], squaredError = 0;
        // Seeded by the previous pose (every tracked frame after a face's first): refined here,
        // without allocating.
        if (previous) {
            std::copy(std::begin(previous->rotation), std::end(previous->rotation), rotation);
            std::copy(std::begin(previous->translation), std::end(previous->translation), translation);
            if (refinePose(image, f, cx, cy, rotation, translation, squaredError)) {
                std::copy(std::begin(rotation), std::end(rotation), pose->rotation);
                std::copy(std::begin(translation), std::end(translation), pose->translation);
                poseAngles(pose);
                return 0;
            }
        }
        // A face's first pose, or a seed that failed: the better of two starts. solvePnP's own (its
        // linear start, refined) can settle on the mirror image of the face behind the camera, which
        // projects onto nearly the same points (the laughing man in the corpus's t1.png); the
        // upright start cannot, as no step of the refinement takes a point behind the camera.
        double best = -1;
        uprightStart(image, f, cx, cy, rotation, translation);
        if (refinePose(image, f, cx, cy, rotation, translation, squaredError)) {
            best = squaredError;
            std::copy(std::begin(rotation), std::end(rotation), pose->rotation);
            std::copy(std::begin(translation), std::end(translation), pose->translation);
        }
        for (size_t i = 0; i < solver->model.size(); ++i) solver->image[i] = {image[i][0], image[i][1]};
        auto &camera = solver->camera;
        camera.at<double>(0, 0) = camera.at<double>(1, 1) = f;
        camera.at<double>(0, 2) = cx;
        camera.at<double>(1, 2) = cy;
        camera.at<double>(2, 2) = 1;
        if (cv::solvePnP(solver->model, solver->image, camera, solver->distortion, solver->rotationVector,
                         solver->translation, false, cv::SOLVEPNP_ITERATIVE)) {
            cv::Rodrigues(solver->rotationVector, solver->rotation);
            for (int i = 0; i < 9; ++i) rotation[i] = solver->rotation.at<double>(i / 3, i % 3);
            for (int i = 0; i < 3; ++i) translation[i] = solver->translation.at<double>(i);
            double residuals[2 * kPosePoints];
            const double theirs = reprojection(image, f, cx, cy, rotation, translation, residuals);
            if (theirs >= 0 && (best < 0 || theirs < best)) {
                best = theirs;
                std::copy(std::begin(rotation), std::end(rotation), pose->rotation);
                std::copy(std::begin(translation), std::end(translation), pose->translation);
            }
        }
        if (best < 0) return 1;
        poseAngles(pose);
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("head pose failed: ") + e.what());
        return -1;
    }
}

}  // extern "C"
