/*
 * overlap.c: ewise_buffer_write and ewise_buffer_read whose host pointer lies inside the
 * buffer's own wrapped host memory copy as memmove does (the bytes as they were before
 * the copy), never as an overlapping memcpy (AddressSanitizer reports one as
 * memcpy-param-overlap). Wrapping host memory is the CPU's alone.
 */
#include "check.h"

#define LEN 4096u

/* The bytes memmove gives for the same copy, on a copy of `before`. */
static void expect_memmove(const unsigned char *before, unsigned char *want, size_t dst, size_t src,
                           size_t n)
{
    memcpy(want, before, LEN);
    memmove(want + dst, want + src, n);
}

int main(void)
{
    static const struct {
        size_t buffer_at; /* where the copy lands in (or comes from) the buffer */
        size_t host_at;   /* where the host pointer is, inside the same memory */
        size_t bytes;
    } cases[] = {
        {16, 0, 64},  {0, 16, 64},    {1, 0, 4095},   {0, 1, 4095}, {100, 100, 200},
        {7, 3, 1000}, {3, 7, 1000},   {0, 2048, 2048}, {2048, 0, 2048}, {4095, 0, 1},
    };
    ewise_device *device;
    ewise_buffer *buffer = NULL;
    unsigned char *memory, before[LEN], want[LEN];
    size_t c, i;

    if (test_is_gpu()) {
        printf("SKIP: wrapped host memory is for CPU devices only (see errors.c)\n");
        return 0;
    }
    device = test_device(DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    memory = (unsigned char *)malloc(LEN);
    CHECK(memory != NULL, "out of memory");
    CHECK_OK(ewise_wrap_host_memory(device, memory, LEN, &buffer));
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t b = cases[c].buffer_at, h = cases[c].host_at, n = cases[c].bytes;
        for (i = 0; i < LEN; i++) {
            memory[i] = (unsigned char)(i * 7 + c);
        }
        memcpy(before, memory, LEN);
        CHECK_OK(ewise_buffer_write(buffer, b, memory + h, n));
        expect_memmove(before, want, b, h, n);
        CHECK(memcmp(memory, want, LEN) == 0, "write case %zu: not memmove's bytes", c);

        for (i = 0; i < LEN; i++) {
            memory[i] = (unsigned char)(i * 13 + c);
        }
        memcpy(before, memory, LEN);
        CHECK_OK(ewise_buffer_read(buffer, b, memory + h, n));
        expect_memmove(before, want, h, b, n);
        CHECK(memcmp(memory, want, LEN) == 0, "read case %zu: not memmove's bytes", c);
    }
    ewise_release_buffer(buffer);
    ewise_release_device(device);
    free(memory);
    return check_finish("overlap");
}
