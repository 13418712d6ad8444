/*
 * strided.c: strided and broadcast tensor descriptions through ewise's C ABI, on the
 * device EWISE_C_DEVICE names.
 *
 * Each case describes its tensors as a DirectML program would (Sizes, Strides in
 * elements, TotalTensorSizeInBytes, GuaranteedBaseOffsetAlignment), binds them at
 * 16-byte-aligned offsets, runs the compiled operator and compares the WHOLE output
 * buffer with what the scalar reference gives walking both tensors' strides:
 *  - every output element holds the reference's bits;
 *  - every byte outside the output binding is untouched (docs/SEMANTICS.md section 5);
 *  - every byte inside the output tensor's span that no element covers (padding, the
 *    neighbours of strided 8- and 16-bit elements) is untouched too: ewise promises this
 *    (README, "8- and 16-bit outputs at any stride never lose a neighbour's byte";
 *    docs/SEMANTICS.md section 5.4), beyond DirectML's rule (section 4), and the
 *    failure message says which of the two broke;
 *  - the input is unchanged.
 * Layouts: stride 0 (broadcast) inputs, transposed (column-major) inputs and outputs,
 * padded rows, 4-D at feature level 2_1, 5-D at 3_0, 8-D at 6_4, 12-D with Extensions,
 * non-zero offsets, input and output in one buffer, GuaranteedBaseOffsetAlignment, larger
 * TotalTensorSizeInBytes. CPU: the same on wrapped host memory (ewise_wrap_host_memory,
 * also at an odd address); GPU: ewise_wrap_host_memory is EWISE_ERROR_NOT_SUPPORTED.
 */
#include "check.h"

#define NONE_ 0xFFFFFFFFu /* first stride of a case without strides */

typedef struct layout_case {
    const char *name;
    int device;                     /* index into devices[] */
    int is_sign;
    DML_TENSOR_DATA_TYPE type;      /* input (and SIGN output) */
    DML_TENSOR_DATA_TYPE out_type;  /* IS_INFINITY output */
    DML_IS_INFINITY_MODE mode;
    uint32_t dims;
    uint32_t sizes[TEST_MAX_DIMS];
    uint32_t in_strides[TEST_MAX_DIMS];  /* in_strides[0] == NONE_: packed */
    uint32_t out_strides[TEST_MAX_DIMS]; /* out_strides[0] == NONE_: packed */
    uint64_t in_offset, out_offset;
    int same_buffer;                /* input and output in one buffer */
    uint32_t in_align, out_align;   /* GuaranteedBaseOffsetAlignment */
    uint64_t extra_total;           /* added to both TotalTensorSizeInBytes */
} layout_case;

enum { DEV_2_1, DEV_3_0, DEV_6_4, DEV_6_4_EXT, DEVICE_COUNT };
static const char *const device_names[DEVICE_COUNT] = {"2_1 strict", "3_0 strict", "6_4 strict",
                                                       "6_4 extensions, nan propagate"};
static ewise_device *devices[DEVICE_COUNT];
static EWISE_NAN_POLICY device_policy[DEVICE_COUNT] = {EWISE_NAN_ZERO, EWISE_NAN_ZERO, EWISE_NAN_ZERO,
                                                       EWISE_NAN_PROPAGATE};

#define F32 DML_TENSOR_DATA_TYPE_FLOAT32
#define F16 DML_TENSOR_DATA_TYPE_FLOAT16
#define U8 DML_TENSOR_DATA_TYPE_UINT8

static const layout_case CASES[] = {
    {"4-D broadcast input (strides 0,5,0,1)", DEV_2_1, 1, F32, F32, DML_IS_INFINITY_MODE_EITHER, 4,
     {2, 3, 4, 5}, {0, 5, 0, 1}, {NONE_}, 0, 0, 0, 0, 0, 0},
    {"4-D transposed input (column-major)", DEV_2_1, 1, F16, F16, DML_IS_INFINITY_MODE_EITHER, 4,
     {2, 3, 4, 5}, {1, 2, 6, 24}, {NONE_}, 0, 0, 0, 0, 0, 0},
    {"4-D padded output rows (row pitch 8 of 5)", DEV_2_1, 1, DML_TENSOR_DATA_TYPE_INT8,
     DML_TENSOR_DATA_TYPE_INT8, DML_IS_INFINITY_MODE_EITHER, 4, {1, 2, 3, 5}, {NONE_},
     {48, 24, 8, 1}, 0, 0, 0, 0, 0, 0},
    {"4-D UINT8 output at stride 2 (neighbour bytes kept)", DEV_2_1, 1, U8, U8,
     DML_IS_INFINITY_MODE_EITHER, 4, {1, 1, 3, 9}, {NONE_}, {64, 64, 20, 2}, 0, 0, 0, 0, 0, 0},
    {"4-D transposed output, IS_INFINITY", DEV_2_1, 0, F32, U8, DML_IS_INFINITY_MODE_EITHER, 4,
     {2, 3, 4, 5}, {NONE_}, {1, 2, 6, 24}, 0, 0, 0, 0, 0, 0},
    {"4-D broadcast input, padded output, IS_INFINITY NEGATIVE", DEV_2_1, 0, F16, U8,
     DML_IS_INFINITY_MODE_NEGATIVE, 4, {3, 1, 4, 7}, {0, 0, 7, 1}, {64, 64, 8, 1}, 0, 0, 0, 0, 0, 0},
    {"5-D broadcast input, padded output", DEV_3_0, 1, DML_TENSOR_DATA_TYPE_INT16,
     DML_TENSOR_DATA_TYPE_INT16, DML_IS_INFINITY_MODE_EITHER, 5, {2, 2, 3, 2, 3}, {9, 0, 3, 0, 1},
     {80, 40, 12, 4, 1}, 0, 0, 0, 0, 0, 0},
    {"5-D UINT16 output at stride 3 (neighbour halves kept)", DEV_3_0, 1, DML_TENSOR_DATA_TYPE_UINT16,
     DML_TENSOR_DATA_TYPE_UINT16, DML_IS_INFINITY_MODE_EITHER, 5, {1, 1, 1, 2, 7}, {NONE_},
     {42, 42, 42, 21, 3}, 0, 0, 0, 0, 0, 0},
    {"5-D IS_INFINITY POSITIVE, UINT8 output at stride 3", DEV_3_0, 0, F32, U8,
     DML_IS_INFINITY_MODE_POSITIVE, 5, {2, 1, 2, 1, 5}, {NONE_}, {64, 32, 16, 16, 3}, 0, 0, 0, 0, 0, 0},
    {"8-D transposed input, INT64", DEV_6_4, 1, DML_TENSOR_DATA_TYPE_INT64, DML_TENSOR_DATA_TYPE_INT64,
     DML_IS_INFINITY_MODE_EITHER, 8, {2, 1, 2, 3, 1, 2, 2, 3}, {1, 2, 2, 4, 12, 12, 24, 48}, {NONE_},
     0, 0, 0, 0, 0, 0},
    {"8-D IS_INFINITY FLOAT16, UINT8 output at stride 3", DEV_6_4, 0, F16, U8,
     DML_IS_INFINITY_MODE_POSITIVE, 8, {1, 2, 1, 2, 1, 2, 1, 5}, {NONE_},
     {128, 64, 64, 32, 32, 16, 16, 3}, 0, 0, 0, 0, 0, 0},
    {"8-D broadcast UINT32 with transposed output", DEV_6_4, 1, DML_TENSOR_DATA_TYPE_UINT32,
     DML_TENSOR_DATA_TYPE_UINT32, DML_IS_INFINITY_MODE_EITHER, 8, {2, 2, 1, 2, 1, 2, 2, 2},
     {0, 8, 0, 4, 0, 2, 1, 0}, {1, 2, 4, 4, 8, 8, 16, 32}, 0, 0, 0, 0, 0, 0},
    {"offsets: input at 48, output at 32 of another buffer", DEV_6_4, 1, F32, F32,
     DML_IS_INFINITY_MODE_EITHER, 2, {7, 9}, {NONE_}, {NONE_}, 48, 32, 0, 0, 0, 0},
    {"one buffer: input at 16, output at 64", DEV_6_4, 1, U8, U8, DML_IS_INFINITY_MODE_EITHER, 1,
     {37}, {NONE_}, {NONE_}, 16, 64, 1, 0, 0, 0},
    {"one buffer: output at 0 before input at 128, IS_INFINITY", DEV_6_4, 0, F32, U8,
     DML_IS_INFINITY_MODE_EITHER, 2, {5, 5}, {NONE_}, {NONE_}, 128, 0, 1, 0, 0, 0},
    {"one buffer: strided input and output interleaved-free", DEV_6_4, 1, F16, F16,
     DML_IS_INFINITY_MODE_EITHER, 2, {3, 4}, {4, 1}, {8, 2}, 0, 64, 1, 0, 0, 0},
    {"GuaranteedBaseOffsetAlignment 64 / 32 with offsets 128 / 96", DEV_6_4, 1, F16, F16,
     DML_IS_INFINITY_MODE_EITHER, 2, {3, 11}, {NONE_}, {NONE_}, 128, 96, 0, 64, 32, 0},
    {"TotalTensorSizeInBytes 36 bytes above the minimum", DEV_6_4, 1, DML_TENSOR_DATA_TYPE_INT32,
     DML_TENSOR_DATA_TYPE_INT32, DML_IS_INFINITY_MODE_EITHER, 2, {4, 4}, {NONE_}, {NONE_}, 16, 16,
     0, 0, 0, 36},
    {"12-D broadcast BFLOAT16 (extensions), NaN propagate", DEV_6_4_EXT, 1,
     EWISE_TENSOR_DATA_TYPE_BFLOAT16, EWISE_TENSOR_DATA_TYPE_BFLOAT16, DML_IS_INFINITY_MODE_EITHER, 12,
     {2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 3}, {0, 0, 48, 0, 24, 0, 12, 0, 6, 0, 3, 1}, {NONE_}, 0, 0, 0,
     0, 0, 0},
    {"transposed FLOAT64 IS_INFINITY to BOOL, padded (extensions)", DEV_6_4_EXT, 0,
     DML_TENSOR_DATA_TYPE_FLOAT64, EWISE_TENSOR_DATA_TYPE_BOOL, DML_IS_INFINITY_MODE_EITHER, 2, {4, 6},
     {1, 4}, {8, 1}, 32, 16, 0, 0, 0, 0},
    {"FLOAT64 SIGN, transposed output (extensions)", DEV_6_4_EXT, 1, DML_TENSOR_DATA_TYPE_FLOAT64,
     DML_TENSOR_DATA_TYPE_FLOAT64, DML_IS_INFINITY_MODE_EITHER, 3, {3, 4, 5}, {NONE_}, {1, 3, 12}, 0,
     0, 0, 0, 0, 0},
};

/* Bytes of a tensor's elements from its base: the offset of element `index` (a
 * multi-index), walking `strides` (in elements). */
static uint64_t element_offset(const uint32_t *index, const uint32_t *strides, uint32_t dims)
{
    uint64_t offset = 0;
    uint32_t d;
    for (d = 0; d < dims; d++) {
        offset += (uint64_t)index[d] * strides[d];
    }
    return offset;
}

static void packed_strides(const uint32_t *sizes, uint32_t dims, uint32_t *strides)
{
    uint32_t acc = 1;
    uint32_t d = dims;
    while (d-- > 0) {
        strides[d] = acc;
        acc *= sizes[d];
    }
}

/* Whether index advanced (0 after the last one). */
static int next_index(uint32_t *index, const uint32_t *sizes, uint32_t dims)
{
    uint32_t d = dims;
    while (d-- > 0) {
        if (++index[d] < sizes[d]) {
            return 1;
        }
        index[d] = 0;
    }
    return 0;
}

/*
 * Host memory for buffers: ewise buffers (create + write), or, with wrap, the caller's
 * memory wrapped (at `odd` bytes past a malloc'ed address).
 */
typedef struct host_buffer {
    ewise_buffer *buffer;
    uint8_t *allocation; /* wrap: what malloc gave */
    uint8_t *data;       /* wrap: the wrapped bytes */
    uint64_t size;
} host_buffer;

static int make_buffer(ewise_device *device, host_buffer *b, const uint8_t *initial, uint64_t size,
                       int wrap, size_t odd)
{
    memset(b, 0, sizeof *b);
    b->size = size;
    if (wrap) {
        b->allocation = (uint8_t *)malloc((size_t)size + odd);
        if (b->allocation == NULL) {
            return 0;
        }
        b->data = b->allocation + odd;
        memcpy(b->data, initial, (size_t)size);
        return CHECK_OK(ewise_wrap_host_memory(device, b->data, size, &b->buffer));
    }
    return CHECK_OK(ewise_create_buffer(device, size, &b->buffer)) &&
           CHECK_OK(ewise_buffer_write(b->buffer, 0, initial, size));
}

/* The buffer's bytes now: read back, or (wrapped) read back AND the host memory itself,
 * which must agree. */
static int buffer_contents(const char *what, host_buffer *b, uint8_t *out)
{
    if (!CHECK_OK(ewise_buffer_read(b->buffer, 0, out, b->size))) {
        return 0;
    }
    if (b->data != NULL) {
        CHECK(memcmp(out, b->data, (size_t)b->size) == 0,
              "%s: ewise_buffer_read of a wrapped buffer differs from the wrapped memory", what);
    }
    return 1;
}

static void free_buffer(host_buffer *b)
{
    ewise_release_buffer(b->buffer);
    free(b->allocation);
}

static void run_layout(const layout_case *c, int wrap, size_t odd)
{
    ewise_device *device = devices[c->device];
    EWISE_NAN_POLICY policy = device_policy[c->device];
    DML_TENSOR_DATA_TYPE out_type = c->is_sign ? c->type : c->out_type;
    size_t in_size = test_elem_size(c->type), out_size = test_elem_size(out_type);
    test_tensor in, out;
    uint32_t in_strides[TEST_MAX_DIMS], out_strides[TEST_MAX_DIMS], index[TEST_MAX_DIMS];
    uint64_t in_total, out_total, in_len, out_len, i;
    uint64_t state = UINT64_C(0x243F6A8885A308D3) + (uint64_t)(c - CASES) * 7919u + (uint64_t)wrap;
    uint8_t *in_initial, *out_initial, *expected, *got, *covered;
    host_buffer in_buf, out_buf;
    ewise_operator *op = NULL;
    ewise_compiled_operator *compiled;
    EWISE_BUFFER_BINDING in_b, out_b;
    uint32_t wrong_elements = 0, outside = 0, padding = 0, input_changed = 0;
    char what[300];

    snprintf(what, sizeof what, "%s %s [%s%s%s]", test_kind_name(), c->name, device_names[c->device],
             wrap ? ", wrapped host memory" : "", odd ? " at an odd address" : "");

    test_tensor_init(&in, c->type, c->dims, c->sizes, c->in_strides[0] == NONE_ ? NULL : c->in_strides);
    test_tensor_init(&out, out_type, c->dims, c->sizes, c->out_strides[0] == NONE_ ? NULL : c->out_strides);
    in.buffer.GuaranteedBaseOffsetAlignment = c->in_align;
    out.buffer.GuaranteedBaseOffsetAlignment = c->out_align;
    in.buffer.TotalTensorSizeInBytes += c->extra_total;
    out.buffer.TotalTensorSizeInBytes += c->extra_total;
    in_total = in.buffer.TotalTensorSizeInBytes;
    out_total = out.buffer.TotalTensorSizeInBytes;
    if (c->in_strides[0] == NONE_) {
        packed_strides(c->sizes, c->dims, in_strides);
    } else {
        memcpy(in_strides, c->in_strides, sizeof in_strides);
    }
    if (c->out_strides[0] == NONE_) {
        packed_strides(c->sizes, c->dims, out_strides);
    } else {
        memcpy(out_strides, c->out_strides, sizeof out_strides);
    }

    if (c->is_sign) {
        compiled = TEST_COMPILE(device, test_create_sign(device, &in, &out, &op), &op);
    } else {
        compiled = TEST_COMPILE(device, test_create_is_infinity(device, &in, &out, c->mode, &op), &op);
    }
    if (compiled == NULL) {
        fprintf(stderr, "  (while testing %s)\n", what);
        return;
    }

    /* buffer sizes: 32 bytes of margin past each binding (one buffer: past both) */
    if (c->same_buffer) {
        in_len = c->in_offset + in_total;
        if (c->out_offset + out_total > in_len) {
            in_len = c->out_offset + out_total;
        }
        in_len += 32;
        out_len = in_len;
    } else {
        in_len = c->in_offset + in_total + 32;
        out_len = c->out_offset + out_total + 32;
    }
    in_initial = (uint8_t *)malloc((size_t)in_len);
    out_initial = (uint8_t *)malloc((size_t)out_len);
    expected = (uint8_t *)malloc((size_t)out_len);
    got = (uint8_t *)malloc((size_t)(in_len > out_len ? in_len : out_len));
    covered = (uint8_t *)calloc((size_t)out_len, 1);
    if (in_initial == NULL || out_initial == NULL || expected == NULL || got == NULL || covered == NULL) {
        fprintf(stderr, "FAIL: out of memory\n");
        exit(1);
    }
    /* random bytes everywhere, then interesting values at every input element */
    for (i = 0; i < in_len; i++) {
        in_initial[i] = (uint8_t)(test_random(&state) >> 56);
    }
    memset(index, 0, sizeof index);
    do {
        uint64_t at = c->in_offset + element_offset(index, in_strides, c->dims) * in_size;
        test_store(in_initial + at, in_size, test_interesting_bits(c->type, &state));
    } while (next_index(index, c->sizes, c->dims));
    if (c->same_buffer) {
        memcpy(out_initial, in_initial, (size_t)out_len);
    } else {
        for (i = 0; i < out_len; i++) {
            out_initial[i] = (uint8_t)(test_random(&state) >> 56);
        }
    }
    /* the expected output buffer: its initial bytes, each element by the reference */
    memcpy(expected, out_initial, (size_t)out_len);
    memset(index, 0, sizeof index);
    do {
        uint64_t from = c->in_offset + element_offset(index, in_strides, c->dims) * in_size;
        uint64_t to = c->out_offset + element_offset(index, out_strides, c->dims) * out_size;
        uint64_t bits = test_load(in_initial + from, in_size);
        uint64_t r = c->is_sign ? ref_sign(c->type, bits, policy) : ref_is_infinity(c->type, bits, c->mode);
        test_store(expected + to, out_size, r);
        memset(covered + to, 1, out_size);
    } while (next_index(index, c->sizes, c->dims));

    memset(&out_buf, 0, sizeof out_buf);
    if (!make_buffer(device, &in_buf, in_initial, in_len, wrap, odd) ||
        (!c->same_buffer && !make_buffer(device, &out_buf, out_initial, out_len, wrap, odd))) {
        fprintf(stderr, "  (while testing %s)\n", what);
        goto done;
    }
    in_b = test_binding(in_buf.buffer, c->in_offset, in_total);
    out_b = test_binding(c->same_buffer ? in_buf.buffer : out_buf.buffer, c->out_offset, out_total);
    if (!CHECK_OK(ewise_execute(compiled, &in_b, &out_b))) {
        fprintf(stderr, "  (while testing %s)\n", what);
        goto done;
    }
    if (!buffer_contents(what, c->same_buffer ? &in_buf : &out_buf, got)) {
        goto done;
    }
    for (i = 0; i < out_len; i++) {
        if (got[i] == expected[i]) {
            continue;
        }
        if (covered[i]) {
            if (wrong_elements++ < 6) {
                fprintf(stderr, "  %s: output byte %" PRIu64 " (in an element): expected 0x%02x, got 0x%02x\n",
                        what, i, expected[i], got[i]);
            }
        } else if (i >= c->out_offset && i < c->out_offset + out_total) {
            if (padding++ < 6) {
                fprintf(stderr,
                        "  %s: output byte %" PRIu64 " (inside the tensor, no element) changed: was 0x%02x, now 0x%02x\n",
                        what, i, expected[i], got[i]);
            }
        } else if (outside++ < 6) {
            fprintf(stderr, "  %s: byte %" PRIu64 " outside the output binding changed: was 0x%02x, now 0x%02x\n",
                    what, i, expected[i], got[i]);
        }
    }
    CHECK(wrong_elements == 0, "%s: %u output bytes of elements differ from the reference", what, wrong_elements);
    CHECK(outside == 0, "%s: %u bytes outside the output binding changed", what, outside);
    CHECK(padding == 0, "%s: %u bytes inside the output tensor that no element covers changed", what, padding);
    if (!c->same_buffer && buffer_contents(what, &in_buf, got)) {
        for (i = 0; i < in_len; i++) {
            input_changed += got[i] != in_initial[i];
        }
        CHECK(input_changed == 0, "%s: %u bytes of the input buffer changed", what, input_changed);
    }
    if (wrap && !c->same_buffer) {
        /* zero copy both ways: a write through ewise is seen in the wrapped memory */
        uint8_t mark[4] = {0xDE, 0xAD, 0xBE, 0xEF};
        if (CHECK_OK(ewise_buffer_write(out_buf.buffer, out_len - 4, mark, 4))) {
            CHECK(memcmp(out_buf.data + out_len - 4, mark, 4) == 0,
                  "%s: ewise_buffer_write to a wrapped buffer did not reach the wrapped memory", what);
        }
        out_buf.data[0] ^= 0xFF;
        if (CHECK_OK(ewise_buffer_read(out_buf.buffer, 0, mark, 1))) {
            CHECK(mark[0] == out_buf.data[0],
                  "%s: ewise_buffer_read of a wrapped buffer does not see the wrapped memory", what);
        }
    }
done:
    free_buffer(&in_buf);
    free_buffer(&out_buf);
    ewise_release_compiled_operator(compiled);
    free(in_initial);
    free(out_initial);
    free(expected);
    free(got);
    free(covered);
}

int main(void)
{
    static const DML_FEATURE_LEVEL levels[DEVICE_COUNT] = {DML_FEATURE_LEVEL_2_1, DML_FEATURE_LEVEL_3_0,
                                                           DML_FEATURE_LEVEL_6_4, DML_FEATURE_LEVEL_6_4};
    size_t c, d;
    printf("strided: device %s\n", test_kind_name());
    for (d = 0; d < DEVICE_COUNT; d++) {
        devices[d] = test_device(levels[d], d == DEV_6_4_EXT ? 1u : 0u, device_policy[d]);
    }
    for (c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        run_layout(&CASES[c], 0, 0);
    }
    if (test_is_gpu()) {
        uint8_t host[64];
        ewise_buffer *buffer = NULL;
        memset(host, 0, sizeof host);
        CHECK_STATUS(ewise_wrap_host_memory(devices[DEV_6_4], host, sizeof host, &buffer),
                     EWISE_ERROR_NOT_SUPPORTED);
        CHECK(buffer == NULL, "a failed ewise_wrap_host_memory wrote its out-pointer");
    } else {
        for (c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
            run_layout(&CASES[c], 1, 0);
            run_layout(&CASES[c], 1, 1); /* wrapped memory at an odd address */
        }
    }
    for (d = 0; d < DEVICE_COUNT; d++) {
        ewise_release_device(devices[d]);
    }
    return check_finish("strided");
}
