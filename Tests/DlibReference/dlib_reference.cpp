// The originals the vision shim is checked against: nothing here is tuned or rewritten.
#include "dlib_reference.h"

#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/opencv.h>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {
void report(char **error, const std::string &message) {
    if (error) *error = strdup(message.c_str());
}

dlib::cv_image<unsigned char> view(const uint8_t *grey, int width, int height, int stride) {
    cv::Mat mat(height, width, CV_8UC1, const_cast<uint8_t *>(grey), static_cast<size_t>(stride));
    return dlib::cv_image<unsigned char>(mat);
}
}  // namespace

struct dr_predictor {
    dlib::shape_predictor predictor;
};

int dr_detect(const uint8_t *grey, int width, int height, int stride, double adjust_threshold, dr_detection *detections,
              int capacity, char **error) {
    try {
        static const dlib::frontal_face_detector stock = dlib::get_frontal_face_detector();
        dlib::frontal_face_detector detector = stock;
        std::vector<dlib::rect_detection> found;
        detector(view(grey, width, height, stride), found, adjust_threshold);
        std::sort(found.begin(), found.end(), [](const auto &a, const auto &b) { return a.detection_confidence > b.detection_confidence; });
        const int count = std::min<int>(capacity, static_cast<int>(found.size()));
        for (int i = 0; i < count; ++i) {
            const dlib::rectangle &r = found[i].rect;
            detections[i] = {static_cast<float>(r.left()), static_cast<float>(r.top()), static_cast<float>(r.width()),
                             static_cast<float>(r.height()), found[i].detection_confidence, static_cast<int>(found[i].weight_index)};
        }
        return count;
    } catch (const std::exception &e) {
        report(error, std::string("dlib's detector failed: ") + e.what());
        return -1;
    }
}

dr_predictor *dr_predictor_load(const char *path, char **error) {
    try {
        auto *loaded = new dr_predictor;
        try {
            dlib::deserialize(path) >> loaded->predictor;
        } catch (...) {
            delete loaded;
            throw;
        }
        return loaded;
    } catch (const std::exception &e) {
        report(error, std::string("cannot load the shape predictor ") + path + ": " + e.what());
        return nullptr;
    }
}

void dr_predictor_destroy(dr_predictor *predictor) { delete predictor; }

int dr_fit(const dr_predictor *predictor, const uint8_t *grey, int width, int height, int stride, float x, float y,
           float box_width, float box_height, float points[136], char **error) {
    try {
        // dlib's rectangles hold whole pixels, right and bottom inclusive.
        const dlib::rectangle box(std::lround(x), std::lround(y), std::lround(x + box_width) - 1, std::lround(y + box_height) - 1);
        const dlib::full_object_detection shape = predictor->predictor(view(grey, width, height, stride), box);
        if (shape.num_parts() != 68) throw std::runtime_error("the model does not give 68 points");
        for (unsigned long i = 0; i < 68; ++i) {
            points[2 * i] = static_cast<float>(shape.part(i).x());
            points[2 * i + 1] = static_cast<float>(shape.part(i).y());
        }
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("dlib's shape predictor failed: ") + e.what());
        return -1;
    }
}

int dr_warp_affine(const uint8_t *grey, int width, int height, int stride, const double forward[6], uint8_t *patch, int side,
                   char **error) {
    try {
        cv::Mat image(height, width, CV_8UC1, const_cast<uint8_t *>(grey), static_cast<size_t>(stride));
        cv::Mat map(2, 3, CV_64F, const_cast<double *>(forward));
        cv::Mat out(side, side, CV_8UC1, patch);
        cv::warpAffine(image, out, map, out.size(), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("cv::warpAffine failed: ") + e.what());
        return -1;
    }
}

int dr_resize_area(const uint8_t *grey, int width, int height, int stride, int factor, uint8_t *out, char **error) {
    try {
        cv::Mat image(height, width, CV_8UC1, const_cast<uint8_t *>(grey), static_cast<size_t>(stride));
        cv::Mat resized(height / factor, width / factor, CV_8UC1, out);
        cv::resize(image, resized, resized.size(), 0, 0, cv::INTER_AREA);
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("cv::resize failed: ") + e.what());
        return -1;
    }
}

long dr_hog_features(const uint8_t *grey, int width, int height, int stride, float *features, long capacity, int *rows,
                     int *columns, char **error) {
    try {
        dlib::array<dlib::array2d<float>> planes;
        dlib::extract_fhog_features(view(grey, width, height, stride), planes, 8);
        *rows = planes.size() > 0 ? static_cast<int>(planes[0].nr()) : 0;
        *columns = planes.size() > 0 ? static_cast<int>(planes[0].nc()) : 0;
        const long count = static_cast<long>(planes.size()) * *rows * *columns;
        if (count > capacity) {
            report(error, "dlib's HOG features need " + std::to_string(count) + " floats");
            return -1;
        }
        float *out = features;
        for (const auto &plane : planes) {
            for (long r = 0; r < plane.nr(); ++r) out = std::copy(&plane[r][0], &plane[r][0] + plane.nc(), out);
        }
        return count;
    } catch (const std::exception &e) {
        report(error, std::string("dlib::extract_fhog_features failed: ") + e.what());
        return -1;
    }
}

int dr_separable_filter(const float *plane, int rows, int columns, const float *row_filter, int row_taps,
                        const float *column_filter, int column_taps, float *out, int add, char **error) {
    try {
        dlib::array2d<float> in(rows, columns), filtered(rows, columns), scratch;
        for (long r = 0; r < rows; ++r) {
            std::copy(plane + r * columns, plane + (r + 1) * columns, &in[r][0]);
            std::copy(out + r * columns, out + (r + 1) * columns, &filtered[r][0]);
        }
        const dlib::matrix<float, 0, 1> across = dlib::mat(row_filter, row_taps), down = dlib::mat(column_filter, column_taps);
        dlib::float_spatially_filter_image_separable(in, filtered, across, down, scratch, add != 0);
        for (long r = 0; r < rows; ++r) std::copy(&filtered[r][0], &filtered[r][0] + columns, out + r * columns);
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("dlib::float_spatially_filter_image_separable failed: ") + e.what());
        return -1;
    }
}

void dr_free_error(char *error) { free(error); }
