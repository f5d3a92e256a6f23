#pragma once
// KINFORMER_SANITIZED_ALLOCATOR: this build runs under ASan or TSan, whose allocators are not
// glibc's (mallinfo2, mallopt and malloc_trim do not see them). g++ defines __SANITIZE_ADDRESS__
// and __SANITIZE_THREAD__; clang 14 answers __has_feature instead.

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KINFORMER_SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KINFORMER_SANITIZED_ALLOCATOR 1
#endif
#endif
