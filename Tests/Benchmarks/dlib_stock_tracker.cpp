// The baseline for the tracking benchmark: dlib's stock pipeline, nothing tuned. The frontal face
// detector runs on frame 0 and every N frames after; on every frame the stock 68-point shape
// predictor fits each box of the last detection. Prints the same JSON lines as
// `facerelay inspect VIDEO --json` (frame, pts, faces with id, confidence, box, landmarks), so that
// tracking_quality.py can score it like any facerelay build.
//
//   dlib_stock_tracker VIDEO MODEL.dat [--every N (default 5)] [--upsample U (default 0)]
//   dlib_stock_tracker VIDEO MODEL.dat --fit-boxes BOXES
//
// With --fit-boxes there is no detection: BOXES has one line per face and frame, "FRAME ID LEFT TOP
// WIDTH HEIGHT ANGLE" (another tracker's boxes; ANGLE, in radians, how far the box is turned in the
// image plane, clockwise on the image), and the stock predictor fits each box on its frame: an
// upright box on the frame itself, a turned one on dlib's upright chip of it (extract_image_chip),
// its points mapped back.
// That is dlib's stock fit on the same box as the other tracker, the reference the tracking
// benchmark measures a tracker's landmarks against.
//
// Last, on stderr: cpu_ms_per_frame X detect_ms Y fit_ms Z frames N, all three means per frame
// (X = Y + Z), thread CPU time of detection and fitting only (decoding runs in ffmpeg).
// Build with Tests/Benchmarks/build-dlib-stock.sh.
#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_transforms.h>

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {
[[noreturn]] void fail(const std::string &message) {
    std::fprintf(stderr, "dlib_stock_tracker: %s\n", message.c_str());
    std::exit(1);
}

// popen goes through sh: quote the path so that spaces and quotes in it survive.
std::string quoted(const std::string &s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

double thread_cpu_ms() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double iou(const dlib::rectangle &a, const dlib::rectangle &b) {
    const double overlap = a.intersect(b).area();
    return overlap / (a.area() + b.area() - overlap);
}

struct Face {
    int id;
    double confidence;
    dlib::rectangle box;
    double angle = 0;  // radians, --fit-boxes only
};

// The stock predictor on `box` turned by `angle`: on the frame itself when upright, else on an
// upright chip twice the box's size around it, at the frame's scale, the points mapped back (the
// stock predictor gives whole pixels, on the frame or on the chip).
std::vector<dlib::dpoint> fitTurned(const dlib::shape_predictor &predictor, const dlib::matrix<unsigned char> &grey,
                                    const dlib::rectangle &box, double angle, dlib::matrix<unsigned char> &chip) {
    std::vector<dlib::dpoint> parts;
    if (angle == 0) {
        const dlib::full_object_detection shape = predictor(grey, box);
        for (unsigned long p = 0; p < shape.num_parts(); ++p) parts.push_back(shape.part(p));
        return parts;
    }
    const dlib::chip_details details(dlib::centered_drect(dlib::dcenter(box), 2 * box.width(), 2 * box.height()),
                                     dlib::chip_dims(2 * box.height(), 2 * box.width()), angle);
    dlib::extract_image_chip(grey, details, chip);
    const dlib::rectangle inChip = dlib::centered_rect(dlib::point(box.width(), box.height()), box.width(), box.height());
    const dlib::full_object_detection upright = predictor(chip, inChip);
    const dlib::point_transform_affine back = dlib::inv(dlib::get_mapping_to_chip(details));
    for (unsigned long p = 0; p < upright.num_parts(); ++p) parts.push_back(back(dlib::dpoint(upright.part(p))));
    return parts;
}
}  // namespace

int main(int argc, char **argv) {
    if (argc < 3) fail("usage: dlib_stock_tracker VIDEO MODEL.dat [--every N] [--upsample U] | [--fit-boxes BOXES]");
    const std::string video = argv[1], model = argv[2];
    long every = 5, upsample = 0;
    // --fit-boxes: frame -> the faces to fit on it.
    std::map<long, std::vector<Face>> given;
    bool fitGiven = false;
    for (int i = 3; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--fit-boxes" && i + 1 < argc) {
            const std::string path = argv[++i];
            std::ifstream boxes(path);
            if (!boxes) fail("cannot read the boxes file " + path);
            long at, id;
            double left, top, width, height, angle;
            while (boxes >> at >> id >> left >> top >> width >> height >> angle) {
                const long l = std::lround(left), t = std::lround(top);
                given[at].push_back({int(id), 1.0, dlib::rectangle(l, t, l + std::lround(width) - 1, t + std::lround(height) - 1), angle});
            }
            if (!boxes.eof()) fail("bad line in " + path + ": want FRAME ID LEFT TOP WIDTH HEIGHT ANGLE");
            fitGiven = true;
            continue;
        }
        if ((flag != "--every" && flag != "--upsample") || i + 1 >= argc) fail("unknown or incomplete option " + flag);
        const long value = std::strtol(argv[++i], nullptr, 10);
        if (flag == "--every" ? value < 1 : value < 0) fail("bad value for " + flag + ": " + argv[i]);
        (flag == "--every" ? every : upsample) = value;
    }
    struct stat st;
    if (stat(video.c_str(), &st) != 0) fail("video not found: " + video);

    dlib::shape_predictor predictor;
    try {
        dlib::deserialize(model) >> predictor;
    } catch (const std::exception &e) {
        fail("cannot load the shape predictor " + model + ": " + e.what());
    }
    if (predictor.num_parts() != 68) fail(model + " has " + std::to_string(predictor.num_parts()) + " points, not 68");
    dlib::frontal_face_detector detector = dlib::get_frontal_face_detector();

    // Size and rate first: ffmpeg's raw output has no header to read them from.
    int width = 0, height = 0, rate_num = 0, rate_den = 0;
    FILE *probe = popen(("ffprobe -v error -select_streams v:0 -show_entries stream=width,height,r_frame_rate -of csv=p=0 " +
                         quoted(video)).c_str(), "r");
    if (!probe) fail("cannot run ffprobe");
    const int got = std::fscanf(probe, "%d,%d,%d/%d", &width, &height, &rate_num, &rate_den);
    if (pclose(probe) != 0 || got != 4 || width <= 0 || height <= 0 || rate_num <= 0 || rate_den <= 0)
        fail("ffprobe found no video stream (width, height, frame rate) in " + video);
    const double fps = double(rate_num) / rate_den;

    FILE *frames = popen(("ffmpeg -v error -i " + quoted(video) + " -f rawvideo -pix_fmt gray -").c_str(), "r");
    if (!frames) fail("cannot run ffmpeg");
    dlib::matrix<unsigned char> grey(height, width);  // row-major, contiguous: ffmpeg's gray8 rows as they come
    dlib::matrix<unsigned char> scanned, chip;
    dlib::pyramid_down<2> pyramid;
    std::vector<Face> faces;
    int next_id = 1;
    double detect_ms = 0, fit_ms = 0;
    long frame = 0;
    for (; std::fread(&grey(0, 0), 1, size_t(width) * height, frames) == size_t(width) * height; ++frame) {
        if (fitGiven) {
            const auto it = given.find(frame);
            faces = it == given.end() ? std::vector<Face>() : it->second;
        } else if (frame % every == 0) {
            const double start = thread_cpu_ms();
            // --upsample finds smaller faces the way dlib's own examples do: pyramid_up, then boxes
            // brought back to the frame's pixels.
            const dlib::matrix<unsigned char> *image = &grey;
            if (upsample > 0) {
                scanned = grey;
                for (long u = 0; u < upsample; ++u) dlib::pyramid_up(scanned);
                image = &scanned;
            }
            std::vector<dlib::rect_detection> found;
            detector(*image, found);
            // The new boxes take the id of the old box they overlap most (IoU > 0.3), each old id once.
            std::vector<Face> updated;
            for (const auto &d : found) {
                const dlib::rectangle box = pyramid.rect_down(d.rect, upsample);
                Face *match = nullptr;
                double best = 0.3;
                for (auto &old : faces)
                    if (old.id > 0 && iou(old.box, box) > best) best = iou(old.box, box), match = &old;
                const double confidence = std::min(1.0, std::max(0.0, (d.detection_confidence + 1) / 2));
                updated.push_back({match ? match->id : next_id++, confidence, box});
                if (match) match->id = 0;  // taken
            }
            faces = updated;
            detect_ms += thread_cpu_ms() - start;
        }
        const double start = thread_cpu_ms();
        std::vector<std::vector<dlib::dpoint>> shapes;
        for (const auto &face : faces) shapes.push_back(fitTurned(predictor, grey, face.box, face.angle, chip));
        fit_ms += thread_cpu_ms() - start;

        std::printf("{\"frame\":%ld,\"pts\":%.6f,\"faces\":[", frame, frame / fps);
        for (size_t i = 0; i < faces.size(); ++i) {
            const dlib::rectangle &b = faces[i].box;
            std::printf("%s{\"id\":%d,\"confidence\":%.3f,\"box\":[%.2f,%.2f,%.2f,%.2f],\"landmarks\":[", i ? "," : "",
                        faces[i].id, faces[i].confidence, double(b.left()), double(b.top()), double(b.width()), double(b.height()));
            for (unsigned long p = 0; p < 68; ++p)
                std::printf("%s[%.2f,%.2f]", p ? "," : "", shapes[i][p].x(), shapes[i][p].y());
            std::printf("]}");
        }
        std::printf("]}\n");
    }
    const int status = pclose(frames);
    std::fflush(stdout);
    if (status != 0 || frame == 0) fail("ffmpeg failed to decode " + video + " (" + std::to_string(frame) + " frames read)");
    const double n = double(frame);
    std::fprintf(stderr, "cpu_ms_per_frame %.3f detect_ms %.3f fit_ms %.3f frames %ld\n", (detect_ms + fit_ms) / n,
                 detect_ms / n, fit_ms / n, frame);
    return 0;
}
