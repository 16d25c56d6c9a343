// The 68-point landmark fit: dlib's shape predictor model, read into a compact form, and evaluated
// with sub-pixel landmarks and no allocation per fit.
#include "face_vision.h"
#include "shim_support.h"

#include <dlib/image_processing.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include <sys/mman.h>

using fv::report;

// Memory on 2 MB pages where the kernel allows it (transparent huge pages on madvise): a fit reads
// 7,500 leaves scattered over 16 MB, and on 4 KB pages nearly every one of those reads also misses
// the TLB. The fit is a third faster on huge pages.
template <typename T> struct HugePageAllocator {
    using value_type = T;
    static constexpr size_t page = 2 << 20;
    HugePageAllocator() = default;
    template <typename U> HugePageAllocator(const HugePageAllocator<U> &) {}
    T *allocate(size_t count) {
        void *memory = std::aligned_alloc(page, rounded(count));
        if (!memory) throw std::bad_alloc();
        madvise(memory, rounded(count), MADV_HUGEPAGE);
        return static_cast<T *>(memory);
    }
    void deallocate(T *memory, size_t) { std::free(memory); }
    static size_t rounded(size_t count) { return (count * sizeof(T) + page - 1) / page * page; }
    template <typename U> bool operator==(const HugePageAllocator<U> &) const { return true; }
};

// One cascade level of the shape predictor, laid out for speed: every tree's splits in one array
// and every leaf's shape update in 8-bit fixed-point values, each leaf with its own scale. dlib keeps
// each leaf as its own heap vector of floats, 65 MB in all and scattered; a fit reads one leaf per
// tree, 7,500 in all, so the fit is bound by memory traffic. Compact, it reads a quarter as much,
// contiguously. The rounding (1/254 of each leaf's largest value) is far below the fit's own noise:
// a leaf is one of 500 small steps that each level sums, and roundings of independent leaves cancel
// rather than add up. The model is read tree by tree, so dlib's form never exists whole in memory.
using LeafValue = int8_t;
constexpr float kLeafSteps = 127;

struct fv_level {
    struct split { uint32_t a, b; float threshold; };
    std::vector<split> splits;     // trees x splitsPerTree
    const LeafValue *leaves = nullptr;  // trees x (splitsPerTree + 1) x values, in the model's leafValues
    std::vector<float> scales;     // trees x (splitsPerTree + 1)
    size_t trees = 0, splitsPerTree = 0;
};

// dlib's shape predictor, evaluated here rather than through dlib::shape_predictor so that the
// landmarks keep their sub-pixel precision (dlib rounds them to whole pixels, which shows as jitter)
// and the scratch vectors are reused (dlib allocates them on every fit). Same model file, same trees.
// Filled in by fv_landmark_model_load and never written afterwards: fitting reaches it only through
// a const reference, so many fitters on many threads can read one model at once.
struct fv_landmark_model {
    dlib::matrix<float, 0, 1> initialShape;
    std::vector<fv_level> levels;
    // The leaves of every level in one allocation, so that huge pages are not half empty.
    std::vector<LeafValue, HugePageAllocator<LeafValue>> leafValues;
    std::vector<std::vector<unsigned long>> anchors;
    std::vector<std::vector<dlib::vector<float, 2>>> deltas;
    size_t mostFeatures = 0;  // of any level: what a fitter's feature buffer must hold
    size_t mostTrees = 0;     // of any level: what a fitter's leaf indices must hold
};

// Everything a fit writes, sized by fv_fitter_create so that fitting allocates nothing.
struct fv_fitter {
    const fv_landmark_model *model;
    dlib::matrix<float, 0, 1> shape;
    std::vector<float> features;
    std::vector<float> sum;
    std::vector<uint32_t> leafOfTree;
    float similarity[4];
};

namespace {

// Reads the cascade of a serialised dlib::shape_predictor (a vector of forests, each a vector of
// regression trees) one tree at a time into fv_level's compact form, with every level's leaves in
// `leafValues`. Every tree of a level must be complete and of one depth, as dlib trains them.
std::vector<fv_level> readCascade(std::istream &in, long values, std::vector<LeafValue, HugePageAllocator<LeafValue>> &leafValues) {
    unsigned long levelCount = 0;
    dlib::deserialize(levelCount, in);
    if (levelCount > 1000) throw dlib::serialization_error("implausible cascade length");
    std::vector<fv_level> levels(levelCount);
    std::vector<std::vector<LeafValue>> leavesOfLevel(levelCount);
    for (size_t level = 0; level < levelCount; ++level) {
        fv_level &out = levels[level];
        std::vector<LeafValue> &outLeaves = leavesOfLevel[level];
        unsigned long treeCount = 0;
        dlib::deserialize(treeCount, in);
        if (treeCount > 100000) throw dlib::serialization_error("implausible forest size");
        out.trees = treeCount;
        dlib::impl::regression_tree tree;
        for (unsigned long t = 0; t < treeCount; ++t) {
            deserialize(tree, in);  // the tree's own friend, found by argument-dependent lookup
            if (t == 0) {
                out.splitsPerTree = tree.splits.size();
                const size_t leaves = out.splitsPerTree + 1;
                out.splits.reserve(treeCount * out.splitsPerTree);
                outLeaves.reserve(treeCount * leaves * static_cast<size_t>(values));
                out.scales.reserve(treeCount * leaves);
            }
            if (tree.splits.size() != out.splitsPerTree || tree.leaf_values.size() != out.splitsPerTree + 1) {
                throw dlib::serialization_error("trees of one level differ in depth");
            }
            for (const auto &split : tree.splits) {
                out.splits.push_back({static_cast<uint32_t>(split.idx1), static_cast<uint32_t>(split.idx2), split.thresh});
            }
            for (const auto &leaf : tree.leaf_values) {
                if (leaf.size() != values) throw dlib::serialization_error("leaf of the wrong size");
                float largest = 0;
                for (long k = 0; k < values; ++k) largest = std::max(largest, std::fabs(leaf(k)));
                const float scale = largest > 0 ? largest / kLeafSteps : 1.0f;
                out.scales.push_back(scale);
                for (long k = 0; k < values; ++k) outLeaves.push_back(static_cast<LeafValue>(std::lround(leaf(k) / scale)));
            }
        }
    }
    size_t total = 0;
    for (const auto &leaves : leavesOfLevel) total += leaves.size();
    leafValues.clear();
    leafValues.reserve(total);
    for (size_t level = 0; level < levelCount; ++level) {
        levels[level].leaves = leafValues.data() + leafValues.size();
        leafValues.insert(leafValues.end(), leavesOfLevel[level].begin(), leavesOfLevel[level].end());
        std::vector<LeafValue>().swap(leavesOfLevel[level]);
    }
    return levels;
}

// The transform from the shape's normalised space to the image: (0,0) to the box's top left corner
// and (1,1) to its bottom right, as dlib::impl::unnormalizing_tform(rect) maps them, but for a box
// of sub-pixel position turned by `angle` (radians, clockwise on the image) about its centre, so that
// a tilted face is fitted upright. Computed directly: dlib fits it by least squares through vectors
// and matrices it allocates on every call.
dlib::point_transform_affine unnormalizing(const fv_box &box, float angle) {
    const double c = std::cos(angle), s = std::sin(angle);
    const double w = box.width - 1, h = box.height - 1;
    dlib::matrix<double, 2, 2> m;
    m = c * w, -s * h,
        s * w, c * h;
    const dlib::vector<double, 2> centre(box.x + w / 2, box.y + h / 2);
    return dlib::point_transform_affine(m, centre - m * dlib::vector<double, 2>(0.5, 0.5));
}

// The 2x2 scale-rotation (row-major) that best maps `from` onto `to` (least squares, both
// centred): what dlib::impl::find_tform_between_shapes computes, without its temporary vectors.
void similarity(const dlib::matrix<float, 0, 1> &from, const dlib::matrix<float, 0, 1> &to, float (&result)[4]) {
    const long n = from.size() / 2;
    double fx = 0, fy = 0, tx = 0, ty = 0;
    for (long i = 0; i < n; ++i) {
        fx += from(2 * i); fy += from(2 * i + 1);
        tx += to(2 * i); ty += to(2 * i + 1);
    }
    fx /= n; fy /= n; tx /= n; ty /= n;
    double real = 0, imaginary = 0, norm = 0;
    for (long i = 0; i < n; ++i) {
        const double ax = from(2 * i) - fx, ay = from(2 * i + 1) - fy;
        const double bx = to(2 * i) - tx, by = to(2 * i + 1) - ty;
        real += ax * bx + ay * by;
        imaginary += ax * by - ay * bx;
        norm += ax * ax + ay * ay;
    }
    const double a = norm > 0 ? real / norm : 1, b = norm > 0 ? imaginary / norm : 0;
    result[0] = static_cast<float>(a);
    result[1] = static_cast<float>(-b);
    result[2] = static_cast<float>(b);
    result[3] = static_cast<float>(a);
}

}  // namespace

extern "C" {

fv_landmark_model *fv_landmark_model_load(const char *model_path, char **error) {
    std::ifstream probe(model_path, std::ios::binary);
    if (!probe) {
        report(error, std::string("cannot open the landmark model ") + model_path + ": " + std::strerror(errno));
        return nullptr;
    }
    probe.close();
    fv_landmark_model *model = nullptr;
    try {
        model = new fv_landmark_model();
        // The layout dlib::serialize(shape_predictor) writes.
        int version = 0;
        std::ifstream in(model_path, std::ios::binary);
        dlib::deserialize(version, in);
        if (version != 1) throw dlib::serialization_error("unknown shape predictor version " + std::to_string(version));
        dlib::deserialize(model->initialShape, in);
        model->levels = readCascade(in, model->initialShape.size(), model->leafValues);
        dlib::deserialize(model->anchors, in);
        dlib::deserialize(model->deltas, in);
        if (model->levels.empty() || model->anchors.size() != model->levels.size() ||
            model->deltas.size() != model->levels.size()) {
            throw dlib::serialization_error("inconsistent cascade");
        }
        for (size_t level = 0; level < model->levels.size(); ++level) {
            const size_t features = model->deltas[level].size();
            if (model->anchors[level].size() != features) throw dlib::serialization_error("inconsistent feature anchors");
            for (const auto &split : model->levels[level].splits) {
                if (split.a >= features || split.b >= features) throw dlib::serialization_error("split outside the features");
            }
            for (unsigned long anchor : model->anchors[level]) {
                if (anchor >= static_cast<unsigned long>(FV_LANDMARK_COUNT)) throw dlib::serialization_error("feature anchor outside the shape");
            }
            model->mostFeatures = std::max(model->mostFeatures, features);
            model->mostTrees = std::max(model->mostTrees, model->levels[level].trees);
        }
    } catch (const std::exception &e) {
        delete model;
        report(error, std::string("the landmark model ") + model_path + " is not a dlib shape predictor: " + e.what());
        return nullptr;
    }
    long parts = model->initialShape.size() / 2;
    if (parts != FV_LANDMARK_COUNT) {
        delete model;
        report(error, std::string("the landmark model ") + model_path + " has " + std::to_string(parts) + " points, not 68");
        return nullptr;
    }
    return model;
}

void fv_landmark_model_destroy(fv_landmark_model *model) { delete model; }

fv_fitter *fv_fitter_create(const fv_landmark_model *model, char **error) {
    if (!model) {
        report(error, "cannot create a landmark fitter without a landmark model");
        return nullptr;
    }
    try {
        auto *fitter = new fv_fitter();
        fitter->model = model;
        fitter->shape.set_size(model->initialShape.size());
        fitter->features.reserve(model->mostFeatures);
        fitter->sum.assign(static_cast<size_t>(model->initialShape.size()), 0);
        fitter->leafOfTree.assign(model->mostTrees, 0);
        return fitter;
    } catch (const std::exception &e) {
        report(error, std::string("cannot create a landmark fitter: ") + e.what());
        return nullptr;
    }
}

void fv_fitter_destroy(fv_fitter *fitter) { delete fitter; }

int fv_fit_landmarks(fv_fitter *fitter, const uint8_t *grey, int width, int height, int stride,
                     fv_box box, float angle, fv_point landmarks[FV_LANDMARK_COUNT], char **error) {
    try {
        if (width < 1 || height < 1) {
            report(error, "landmark fit failed: empty image");
            return -1;
        }
        // The model is shared with other fitters, possibly on other threads: read it, never write it.
        const fv_landmark_model &model = *fitter->model;
        const dlib::point_transform_affine toImage = unnormalizing(box, angle);
        dlib::matrix<float, 0, 1> &shape = fitter->shape;
        shape = model.initialShape;
        std::vector<float> &features = fitter->features;
        const float (&m)[4] = fitter->similarity;
        for (size_t level = 0; level < model.levels.size(); ++level) {
            // Where the sampled pixels of this level sit, relative to the current shape.
            similarity(model.initialShape, shape, fitter->similarity);
            const auto &anchors = model.anchors[level];
            const auto &deltas = model.deltas[level];
            features.resize(deltas.size());
            for (size_t i = 0; i < deltas.size(); ++i) {
                const dlib::vector<float, 2> d = deltas[i];
                const dlib::vector<float, 2> at(m[0] * d.x() + m[1] * d.y() + shape(2 * anchors[i]),
                                                m[2] * d.x() + m[3] * d.y() + shape(2 * anchors[i] + 1));
                // Outside the frame the border pixel is read, as if the frame went on: a face at
                // the edge is fitted from what is visible, not pulled towards a black margin.
                // Rounded inline (floor of x + 0.5: lround's result wherever the clamp keeps it),
                // not through libm's lround, a call per sample.
                const dlib::dpoint p = toImage(at);
                const long x = std::clamp(static_cast<long>(std::floor(p.x() + 0.5)), 0L, static_cast<long>(width - 1));
                const long y = std::clamp(static_cast<long>(std::floor(p.y() + 0.5)), 0L, static_cast<long>(height - 1));
                features[i] = grey[y * stride + x];
            }
            const fv_level &cascade = model.levels[level];
            const size_t values = static_cast<size_t>(shape.size()), leaves = cascade.splitsPerTree + 1;
            float *sum = fitter->sum.data();
            std::fill(sum, sum + values, 0.0f);
            // Every tree's leaf first, then their updates, fetched a few trees ahead: the leaves are
            // scattered over the whole model, and waiting for each in turn is most of a fit's time.
            uint32_t *leafOfTree = fitter->leafOfTree.data();
            for (size_t tree = 0; tree < cascade.trees; ++tree) {
                const fv_level::split *splits = cascade.splits.data() + tree * cascade.splitsPerTree;
                size_t node = 0;
                // Without a branch: which way a split goes is a coin toss the branch predictor
                // loses half the time, and without branches the trees' walks overlap.
                while (node < cascade.splitsPerTree) {
                    const fv_level::split &s = splits[node];
                    node = 2 * node + 2 - static_cast<size_t>(features[s.a] - features[s.b] > s.threshold);
                }
                leafOfTree[tree] = static_cast<uint32_t>(tree * leaves + node - cascade.splitsPerTree);
            }
            constexpr size_t ahead = 8;
            const auto prefetch = [&](size_t tree) {
                const char *update = reinterpret_cast<const char *>(cascade.leaves + leafOfTree[tree] * values);
                for (size_t byte = 0; byte < values * sizeof(LeafValue); byte += 64) __builtin_prefetch(update + byte);
            };
            for (size_t tree = 0; tree < std::min(ahead, cascade.trees); ++tree) prefetch(tree);
            for (size_t tree = 0; tree < cascade.trees; ++tree) {
                if (tree + ahead < cascade.trees) prefetch(tree + ahead);
                const size_t leaf = leafOfTree[tree];
                const LeafValue *update = cascade.leaves + leaf * values;
                const float scale = cascade.scales[leaf];
                for (size_t k = 0; k < values; ++k) sum[k] += scale * static_cast<float>(update[k]);
            }
            for (size_t k = 0; k < values; ++k) shape(k) += sum[k];
        }
        for (int i = 0; i < FV_LANDMARK_COUNT; ++i) {
            const dlib::dpoint p = toImage(dlib::dpoint(shape(2 * i), shape(2 * i + 1)));
            landmarks[i] = {static_cast<float>(p.x()), static_cast<float>(p.y())};
        }
        return 0;
    } catch (const std::exception &e) {
        report(error, std::string("landmark fit failed: ") + e.what());
        return -1;
    }
}

}  // extern "C"
