#ifndef FACERELAY_ALLOCATION_COUNTER_H
#define FACERELAY_ALLOCATION_COUNTER_H

/* Heap allocations made by the calling thread so far (malloc, calloc, realloc, posix_memalign,
   aligned_alloc, memalign). Linked into the benchmark and the FaceTracking tests only: it replaces
   the allocator's entry points for every library in the process. */
unsigned long long fr_allocation_count(void);

#endif
