// A memory manager for dlib's array2d that keeps its block between sizes: set_size to a size no
// larger than the largest so far reuses the block instead of freeing it and allocating anew. One
// buffer then serves every level of an image pyramid, or patches of every size, largest first:
// the scan keeps one level's features instead of every level's, and still allocates nothing once
// the largest has been seen.
#ifndef FV_KEPT_MEMORY_H
#define FV_KEPT_MEMORY_H

#include <dlib/array.h>
#include <dlib/array2d.h>
#include <dlib/matrix.h>

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace fv {

template <typename T> class kept_memory {
    // array2d leaves elements as `new T[n]` does, unset for these types, and every user here
    // writes what it reads; a type with a destructor would need its elements rebuilt.
    static_assert(std::is_trivially_destructible<T>::value, "kept blocks are reused without rebuilding their elements");
    T *block = nullptr;
    size_t capacity = 0;

public:
    template <typename U> struct rebind { typedef kept_memory<U> other; };

    kept_memory() = default;
    kept_memory(const kept_memory &) = delete;
    kept_memory &operator=(const kept_memory &) = delete;
    ~kept_memory() { delete[] block; }

    T *allocate_array(size_t size) {
        if (size > capacity) {
            delete[] block;
            block = nullptr;
            capacity = 0;
            block = new T[size];
            capacity = size;
        }
        return block;
    }

    // The block stays for the next size; the destructor frees it.
    void deallocate_array(T *) {}

    void swap(kept_memory &other) {
        std::swap(block, other.block);
        std::swap(capacity, other.capacity);
    }
};

// A plane of floats (HOG features, a filter's output) and a grey image on kept blocks.
typedef dlib::array2d<float, kept_memory<char>> kept_plane;
typedef dlib::array2d<unsigned char, kept_memory<char>> kept_grey;
typedef dlib::array2d<dlib::matrix<float, 18, 1>, kept_memory<char>> kept_histograms;

}  // namespace fv

#endif
