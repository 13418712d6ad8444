/*
 * ops.c: every operator x data type x mode of ewise's C ABI, bit-compared with the scalar
 * reference of check.h (docs/SEMANTICS.md section 1), on the device EWISE_C_DEVICE names.
 *
 * - SIGN: FLOAT32, FLOAT16, the eight integer types (strict device at 6_4), FLOAT64 and
 *   BFLOAT16 (Extensions = 1), under both NaN policies (one device per policy);
 * - IS_INFINITY: FLOAT32, FLOAT16 (strict), FLOAT64, BFLOAT16 and the four FLOAT8 types
 *   (Extensions = 1), in all three modes, UINT8 output (and BOOL output, Extensions = 1);
 * - inputs: every bit pattern of the 8- and 16-bit types; special values and a few
 *   thousand pseudo-random patterns of the 32- and 64-bit types;
 * - both paths: create / compile / execute with bindings (also in place: one buffer, the
 *   same binding twice), and ewise_sign / ewise_is_infinity (also output == input, and
 *   host pointers at odd addresses).
 */
#include "check.h"

/* ------------------------------------------------------------------------------------ */
/* Inputs                                                                               */
/* ------------------------------------------------------------------------------------ */

static const uint32_t SPECIAL32[] = {
    0x00000000u, 0x80000000u, /* +0, -0 (INT32 min) */
    0x00000001u, 0x80000001u, /* smallest subnormals */
    0x007FFFFFu, 0x807FFFFFu, /* largest subnormals */
    0x00800000u, 0x80800000u, /* smallest normals */
    0x3F800000u, 0xBF800000u, /* +1, -1 */
    0x7F7FFFFFu, 0xFF7FFFFFu, /* largest finite */
    0x7F800000u, 0xFF800000u, /* +inf, -inf */
    0x7FC00000u, 0xFFC00000u, /* quiet NaNs */
    0x7F800001u, 0xFF800001u, /* signalling NaNs */
    0x7FBFFFFFu, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FC12345u, /* NaN payloads; INT32 max, -1 */
    0x00000002u, 0xFFFFFFFEu, 0x7FFFFFFEu, 0x80000002u, 0x12345678u, 0xDEADBEEFu};

static const uint64_t SPECIAL64[] = {
    UINT64_C(0x0000000000000000), UINT64_C(0x8000000000000000), /* +0, -0 (INT64 min) */
    UINT64_C(0x0000000000000001), UINT64_C(0x8000000000000001), /* smallest subnormals */
    UINT64_C(0x000FFFFFFFFFFFFF), UINT64_C(0x800FFFFFFFFFFFFF), /* largest subnormals */
    UINT64_C(0x0010000000000000), UINT64_C(0x8010000000000000), /* smallest normals */
    UINT64_C(0x3FF0000000000000), UINT64_C(0xBFF0000000000000), /* +1, -1 */
    UINT64_C(0x7FEFFFFFFFFFFFFF), UINT64_C(0xFFEFFFFFFFFFFFFF), /* largest finite */
    UINT64_C(0x7FF0000000000000), UINT64_C(0xFFF0000000000000), /* +inf, -inf */
    UINT64_C(0x7FF8000000000000), UINT64_C(0xFFF8000000000000), /* quiet NaNs */
    UINT64_C(0x7FF0000000000001), UINT64_C(0xFFF0000000000001), /* signalling NaNs */
    UINT64_C(0x7FF7FFFFFFFFFFFF), UINT64_C(0x7FFFFFFFFFFFFFFF), /* NaN; INT64 max */
    UINT64_C(0xFFFFFFFFFFFFFFFF), UINT64_C(0x7FF8000000012345), /* -1; NaN payload */
    UINT64_C(0x0000000000000002), UINT64_C(0xFFFFFFFFFFFFFFFE), UINT64_C(0x00000000FFFFFFFF),
    UINT64_C(0xFFFFFFFF00000000), UINT64_C(0x0000000100000000), UINT64_C(0x8000000080000000),
    UINT64_C(0x3FF0000000000000) ^ UINT64_C(0x0000000000000001),
    UINT64_C(0x7FF0000000000000) ^ UINT64_C(0x0000000080000000), /* NaN, high word +inf */
    UINT64_C(0x7FF0000100000000), /* NaN, low word 0 */
    UINT64_C(0x000000007F800000), UINT64_C(0x00000000FF800000)};

#define RANDOM_PATTERNS 4000u

/*
 * The input patterns of one type, as packed elements in native byte order: every pattern
 * for 8- and 16-bit types; the specials, then pseudo-random ones (a quarter of them with
 * an all-ones exponent, a quarter with a zero exponent, for float types) otherwise.
 */
static uint8_t *make_inputs(DML_TENSOR_DATA_TYPE type, uint32_t *count)
{
    size_t size = test_elem_size(type);
    uint32_t n, i;
    uint8_t *data;
    uint64_t state = UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)type;
    if (size <= 2) {
        n = size == 1 ? 256u : 65536u;
        data = (uint8_t *)malloc((size_t)n * size);
        if (data == NULL) {
            fprintf(stderr, "FAIL: out of memory\n");
            exit(1);
        }
        for (i = 0; i < n; i++) {
            test_store(data + (size_t)i * size, size, i);
        }
        *count = n;
        return data;
    }
    {
        uint32_t specials = size == 4 ? (uint32_t)(sizeof SPECIAL32 / sizeof SPECIAL32[0])
                                      : (uint32_t)(sizeof SPECIAL64 / sizeof SPECIAL64[0]);
        n = specials + RANDOM_PATTERNS;
        data = (uint8_t *)malloc((size_t)n * size);
        if (data == NULL) {
            fprintf(stderr, "FAIL: out of memory\n");
            exit(1);
        }
        for (i = 0; i < specials; i++) {
            test_store(data + (size_t)i * size, size, size == 4 ? SPECIAL32[i] : SPECIAL64[i]);
        }
        for (i = specials; i < n; i++) {
            uint64_t bits = test_random(&state);
            if (size == 4) {
                bits &= 0xFFFFFFFFu;
                if (i % 4 == 1) {
                    bits |= 0x7F800000u; /* inf or NaN */
                } else if (i % 4 == 2) {
                    bits &= ~(uint64_t)0x7F800000u; /* zero or subnormal */
                }
            } else {
                if (i % 4 == 1) {
                    bits |= UINT64_C(0x7FF0000000000000);
                } else if (i % 4 == 2) {
                    bits &= ~UINT64_C(0x7FF0000000000000);
                }
            }
            test_store(data + (size_t)i * size, size, bits);
        }
        *count = n;
        return data;
    }
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes == 0 ? 1 : bytes);
    if (p == NULL) {
        fprintf(stderr, "FAIL: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* ------------------------------------------------------------------------------------ */
/* Comparison                                                                           */
/* ------------------------------------------------------------------------------------ */

/* Elements compared, and comparisons made (printed at the end). */
static uint64_t compared_elements = 0;
static uint32_t comparisons = 0;

typedef struct op_case {
    const char *device_name; /* "strict/zero" ... */
    int is_sign;
    DML_TENSOR_DATA_TYPE type;
    DML_TENSOR_DATA_TYPE out_type; /* IS_INFINITY: UINT8 or BOOL */
    EWISE_NAN_POLICY policy;
    DML_IS_INFINITY_MODE mode;
} op_case;

static void describe(const op_case *c, const char *path, char *out, size_t cap)
{
    if (c->is_sign) {
        snprintf(out, cap, "%s SIGN %s nan=%s [%s, %s]", test_kind_name(), test_type_name(c->type),
                 c->policy == EWISE_NAN_PROPAGATE ? "propagate" : "zero", c->device_name, path);
    } else {
        snprintf(out, cap, "%s IS_INFINITY %s -> %s mode=%d [%s, %s]", test_kind_name(),
                 test_type_name(c->type), test_type_name(c->out_type), (int)c->mode, c->device_name,
                 path);
    }
}

/* The expected output bytes of `c` for `n` input elements. */
static uint8_t *expected_output(const op_case *c, const uint8_t *input, uint32_t n)
{
    size_t in_size = test_elem_size(c->type);
    size_t out_size = c->is_sign ? in_size : 1;
    uint8_t *expected = (uint8_t *)xmalloc((size_t)n * out_size);
    uint32_t i;
    for (i = 0; i < n; i++) {
        uint64_t bits = test_load(input + (size_t)i * in_size, in_size);
        uint64_t r = c->is_sign ? ref_sign(c->type, bits, c->policy)
                                : ref_is_infinity(c->type, bits, c->mode);
        test_store(expected + (size_t)i * out_size, out_size, r);
    }
    return expected;
}

/* Compares `got` with `expected` element by element; one failed check (listing the first
 * few elements that differ) when they differ. */
static void compare(const op_case *c, const char *path, const uint8_t *input, const uint8_t *expected,
                    const uint8_t *got, uint32_t n)
{
    size_t in_size = test_elem_size(c->type);
    size_t out_size = c->is_sign ? in_size : 1;
    uint32_t i, wrong = 0;
    char what[256];
    compared_elements += n;
    comparisons++;
    if (memcmp(expected, got, (size_t)n * out_size) == 0) {
        return;
    }
    describe(c, path, what, sizeof what);
    for (i = 0; i < n; i++) {
        uint64_t want = test_load(expected + (size_t)i * out_size, out_size);
        uint64_t have = test_load(got + (size_t)i * out_size, out_size);
        if (want != have) {
            if (wrong < 8) {
                fprintf(stderr,
                        "  %s: element %u input 0x%0*" PRIx64 ": expected 0x%0*" PRIx64
                        ", got 0x%0*" PRIx64 "\n",
                        what, i, (int)(2 * in_size), test_load(input + (size_t)i * in_size, in_size),
                        (int)(2 * out_size), want, (int)(2 * out_size), have);
            }
            wrong++;
        }
    }
    CHECK(wrong == 0, "%s: %u of %u elements differ from the reference", what, wrong, n);
}

/* ------------------------------------------------------------------------------------ */
/* The two paths                                                                        */
/* ------------------------------------------------------------------------------------ */

/* create / compile / execute with bindings; SIGN also in place. */
static void run_operator_path(ewise_device *device, const op_case *c, const uint8_t *input,
                              const uint8_t *expected, uint32_t n)
{
    size_t in_size = test_elem_size(c->type);
    size_t out_size = c->is_sign ? in_size : 1;
    test_tensor in, out;
    ewise_operator *op = NULL;
    ewise_compiled_operator *compiled;
    ewise_buffer *in_buf = NULL, *out_buf = NULL;
    uint8_t *got = (uint8_t *)xmalloc((size_t)n * out_size);
    EWISE_BUFFER_BINDING in_b, out_b;
    char what[256];

    describe(c, "operator", what, sizeof what);
    test_tensor_1d(&in, c->type, n);
    test_tensor_1d(&out, c->is_sign ? c->type : c->out_type, n);
    if (c->is_sign) {
        compiled = TEST_COMPILE(device, test_create_sign(device, &in, &out, &op), &op);
    } else {
        compiled = TEST_COMPILE(device, test_create_is_infinity(device, &in, &out, c->mode, &op), &op);
    }
    if (compiled == NULL) {
        fprintf(stderr, "  (while testing %s)\n", what);
        free(got);
        return;
    }
    if (CHECK_OK(ewise_create_buffer(device, in.buffer.TotalTensorSizeInBytes, &in_buf)) &&
        CHECK_OK(ewise_create_buffer(device, out.buffer.TotalTensorSizeInBytes, &out_buf)) &&
        CHECK_OK(ewise_buffer_write(in_buf, 0, input, (uint64_t)n * in_size))) {
        in_b = test_binding(in_buf, 0, in.buffer.TotalTensorSizeInBytes);
        out_b = test_binding(out_buf, 0, out.buffer.TotalTensorSizeInBytes);
        if (CHECK_OK(ewise_execute(compiled, &in_b, &out_b)) &&
            CHECK_OK(ewise_buffer_read(out_buf, 0, got, (uint64_t)n * out_size))) {
            compare(c, "operator", input, expected, got, n);
        }
        /* the input buffer is unchanged by an execution that does not write it */
        if (CHECK_OK(ewise_buffer_read(in_buf, 0, got, (uint64_t)n * (c->is_sign ? in_size : 1)))) {
            if (c->is_sign) {
                CHECK(memcmp(got, input, (size_t)n * in_size) == 0, "%s: the input buffer changed", what);
            }
        }
        if (c->is_sign) {
            /* in place: one buffer, the same binding for the input and the output */
            if (CHECK_OK(ewise_execute(compiled, &in_b, &in_b)) &&
                CHECK_OK(ewise_buffer_read(in_buf, 0, got, (uint64_t)n * out_size))) {
                compare(c, "operator in place", input, expected, got, n);
            }
        }
    }
    ewise_release_buffer(in_buf);
    ewise_release_buffer(out_buf);
    ewise_release_compiled_operator(compiled);
    free(got);
}

/* ewise_sign / ewise_is_infinity over host memory: aligned, in place, odd addresses. */
static void run_host_path(ewise_device *device, const op_case *c, const uint8_t *input,
                          const uint8_t *expected, uint32_t n)
{
    size_t in_size = test_elem_size(c->type);
    size_t out_size = c->is_sign ? in_size : 1;
    size_t in_bytes = (size_t)n * in_size, out_bytes = (size_t)n * out_size;
    uint8_t *got = (uint8_t *)xmalloc(out_bytes);
    uint8_t *odd_in = (uint8_t *)xmalloc(in_bytes + 1);
    uint8_t *odd_out = (uint8_t *)xmalloc(out_bytes + 3);

    if (c->is_sign) {
        if (CHECK_OK(ewise_sign(device, c->type, input, got, n))) {
            compare(c, "ewise_sign", input, expected, got, n);
        }
        memcpy(got, input, in_bytes);
        if (CHECK_OK(ewise_sign(device, c->type, got, got, n))) {
            compare(c, "ewise_sign in place", input, expected, got, n);
        }
        memcpy(odd_in + 1, input, in_bytes);
        if (CHECK_OK(ewise_sign(device, c->type, odd_in + 1, odd_out + 3, n))) {
            compare(c, "ewise_sign input+1 output+3", input, expected, odd_out + 3, n);
        }
        if (CHECK_OK(ewise_sign(device, c->type, odd_in + 1, odd_in + 1, n))) {
            compare(c, "ewise_sign in place at input+1", input, expected, odd_in + 1, n);
        }
    } else {
        if (CHECK_OK(ewise_is_infinity(device, c->type, c->mode, input, got, n))) {
            compare(c, "ewise_is_infinity", input, expected, got, n);
        }
        memcpy(odd_in + 1, input, in_bytes);
        if (CHECK_OK(ewise_is_infinity(device, c->type, c->mode, odd_in + 1, odd_out + 3, n))) {
            compare(c, "ewise_is_infinity input+1 output+3", input, expected, odd_out + 3, n);
        }
    }
    free(got);
    free(odd_in);
    free(odd_out);
}

static void run_case(ewise_device *device, const op_case *c)
{
    uint32_t n;
    uint8_t *input = make_inputs(c->type, &n);
    uint8_t *expected = expected_output(c, input, n);
    run_operator_path(device, c, input, expected, n);
    /* The host path validates the type as the strict device would: BOOL output exists
     * only in the operator path. */
    if (c->is_sign || c->out_type == DML_TENSOR_DATA_TYPE_UINT8) {
        run_host_path(device, c, input, expected, n);
    }
    free(input);
    free(expected);
}

/* ------------------------------------------------------------------------------------ */
/* The reference, checked against values written out by hand from docs/SEMANTICS.md     */
/* ------------------------------------------------------------------------------------ */

static void check_reference(void)
{
    const DML_TENSOR_DATA_TYPE F32 = DML_TENSOR_DATA_TYPE_FLOAT32, F16 = DML_TENSOR_DATA_TYPE_FLOAT16,
                               F64 = DML_TENSOR_DATA_TYPE_FLOAT64, BF16 = EWISE_TENSOR_DATA_TYPE_BFLOAT16;
    const EWISE_NAN_POLICY Z = EWISE_NAN_ZERO, P = EWISE_NAN_PROPAGATE;
    struct {
        DML_TENSOR_DATA_TYPE type;
        uint64_t in;
        EWISE_NAN_POLICY policy;
        uint64_t out;
    } sign[] = {
        {F32, 0x80000000u, Z, 0},               /* -0 -> +0 */
        {F32, 0x00000001u, Z, 0x3F800000u},     /* subnormal -> +1 */
        {F32, 0x807FFFFFu, Z, 0xBF800000u},     /* negative subnormal -> -1 */
        {F32, 0xFF800000u, Z, 0xBF800000u},     /* -inf -> -1 */
        {F32, 0x7FC00000u, Z, 0},               /* NaN -> +0 */
        {F32, 0xFF800001u, P, 0xFF800001u},     /* NaN kept bit for bit */
        {F32, 0x7F800000u, P, 0x3F800000u},     /* +inf -> +1 */
        {F16, 0x8000u, Z, 0},                   /* -0 */
        {F16, 0x0001u, Z, 0x3C00u},             /* subnormal */
        {F16, 0x83FFu, P, 0xBC00u},             /* negative subnormal */
        {F16, 0x7C00u, Z, 0x3C00u},             /* +inf */
        {F16, 0xFC00u, Z, 0xBC00u},             /* -inf */
        {F16, 0x7C01u, Z, 0},                   /* NaN */
        {F16, 0xFE00u, P, 0xFE00u},             /* NaN kept */
        {F16, 0x7BFFu, Z, 0x3C00u},             /* 65504 */
        {BF16, 0x8001u, Z, 0xBF80u},            /* bfloat16 negative subnormal */
        {BF16, 0x7F81u, P, 0x7F81u},            /* bfloat16 NaN kept */
        {BF16, 0x7F80u, Z, 0x3F80u},            /* bfloat16 +inf */
        {F64, UINT64_C(0x8000000000000000), P, 0},
        {F64, UINT64_C(0x0000000000000001), Z, UINT64_C(0x3FF0000000000000)},
        {F64, UINT64_C(0xFFF0000000000000), Z, UINT64_C(0xBFF0000000000000)},
        {F64, UINT64_C(0xFFF0000000000001), P, UINT64_C(0xFFF0000000000001)},
        {F64, UINT64_C(0x7FF8000000000000), Z, 0},
        {DML_TENSOR_DATA_TYPE_INT8, 0x80u, Z, 0xFFu}, /* -128 -> -1 */
        {DML_TENSOR_DATA_TYPE_INT8, 0x7Fu, Z, 0x01u},
        {DML_TENSOR_DATA_TYPE_INT16, 0x8000u, Z, 0xFFFFu},
        {DML_TENSOR_DATA_TYPE_INT32, 0x80000000u, Z, 0xFFFFFFFFu},
        {DML_TENSOR_DATA_TYPE_INT64, UINT64_C(0x8000000000000000), Z, UINT64_C(0xFFFFFFFFFFFFFFFF)},
        {DML_TENSOR_DATA_TYPE_INT64, UINT64_C(0x7FFFFFFFFFFFFFFF), Z, 1},
        {DML_TENSOR_DATA_TYPE_INT64, 0, Z, 0},
        {DML_TENSOR_DATA_TYPE_UINT8, 0x80u, Z, 1},
        {DML_TENSOR_DATA_TYPE_UINT16, 0, Z, 0},
        {DML_TENSOR_DATA_TYPE_UINT32, 0xFFFFFFFFu, Z, 1},
        {DML_TENSOR_DATA_TYPE_UINT64, UINT64_C(0x8000000000000000), Z, 1},
    };
    struct {
        DML_TENSOR_DATA_TYPE type;
        uint64_t in;
        int mode;
        uint8_t out;
    } inf[] = {
        {F32, 0x7F800000u, 0, 1}, {F32, 0xFF800000u, 0, 1}, {F32, 0x7F800000u, 2, 0},
        {F32, 0xFF800000u, 1, 0}, {F32, 0xFF800000u, 2, 1}, {F32, 0x7F800001u, 0, 0},
        {F32, 0x7F7FFFFFu, 0, 0}, {F16, 0x7C00u, 1, 1},     {F16, 0xFC00u, 0, 1},
        {F16, 0x7C01u, 0, 0},     {F16, 0x7BFFu, 0, 0},     {BF16, 0xFF80u, 2, 1},
        {BF16, 0x7F80u, 2, 0},    {BF16, 0x7FC0u, 0, 0},    {F64, UINT64_C(0x7FF0000000000000), 1, 1},
        {F64, UINT64_C(0x7FF0000000000001), 0, 0},          {F64, UINT64_C(0xFFF0000000000000), 1, 0},
        {EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2, 0x7Cu, 0, 1},   {EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2, 0xFCu, 2, 1},
        {EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2, 0xFCu, 1, 0},   {EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2, 0x7Du, 0, 0},
        {EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2, 0x7Bu, 0, 0},   {EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FN, 0x7Fu, 0, 0},
        {EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FN, 0x78u, 0, 0}, {EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2FNUZ, 0x7Cu, 0, 0},
    };
    size_t i;
    for (i = 0; i < sizeof sign / sizeof sign[0]; i++) {
        uint64_t r = ref_sign(sign[i].type, sign[i].in, sign[i].policy);
        CHECK(r == sign[i].out, "reference SIGN %s 0x%" PRIx64 ": 0x%" PRIx64 ", expected 0x%" PRIx64,
              test_type_name(sign[i].type), sign[i].in, r, sign[i].out);
    }
    for (i = 0; i < sizeof inf / sizeof inf[0]; i++) {
        uint8_t r = ref_is_infinity(inf[i].type, inf[i].in, (DML_IS_INFINITY_MODE)inf[i].mode);
        CHECK(r == inf[i].out, "reference IS_INFINITY %s 0x%" PRIx64 " mode %d: %u, expected %u",
              test_type_name(inf[i].type), inf[i].in, inf[i].mode, (unsigned)r, (unsigned)inf[i].out);
    }
    /* every float16 value that is finite and non-zero decodes to its sign */
    for (i = 0; i < 65536; i++) {
        int nan;
        double x = ref_decode(F16, i, &nan);
        int exponent = (int)((i >> 10) & 31);
        if (exponent == 31) {
            CHECK(nan == ((i & 0x3FF) != 0), "float16 0x%04x NaN decode", (unsigned)i);
        } else if ((i & 0x7FFF) != 0) {
            CHECK(((i & 0x8000) != 0) == (x < 0.0) && x != 0.0, "float16 0x%04x decodes to %g",
                  (unsigned)i, x);
        }
    }
    CHECK(ref_decode(F16, 0x3C00, (int[]){0}) == 1.0, "float16 0x3C00 is 1.0");
    CHECK(ref_decode(F16, 0x7BFF, (int[]){0}) == 65504.0, "float16 0x7BFF is 65504");
    CHECK(ref_decode(F16, 0x0001, (int[]){0}) == 1.0 / 16777216.0, "float16 0x0001 is 2^-24");
    CHECK(ref_decode(BF16, 0x3F80, (int[]){0}) == 1.0, "bfloat16 0x3F80 is 1.0");
}

/* ------------------------------------------------------------------------------------ */

int main(void)
{
    static const DML_TENSOR_DATA_TYPE strict_sign_types[] = {
        DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_UINT32,
        DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_UINT8,   DML_TENSOR_DATA_TYPE_INT32,
        DML_TENSOR_DATA_TYPE_INT16,   DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_UINT64,
        DML_TENSOR_DATA_TYPE_INT64};
    static const DML_TENSOR_DATA_TYPE extended_sign_types[] = {DML_TENSOR_DATA_TYPE_FLOAT64,
                                                               EWISE_TENSOR_DATA_TYPE_BFLOAT16};
    static const DML_TENSOR_DATA_TYPE strict_inf_types[] = {DML_TENSOR_DATA_TYPE_FLOAT32,
                                                            DML_TENSOR_DATA_TYPE_FLOAT16};
    static const DML_TENSOR_DATA_TYPE extended_inf_types[] = {
        DML_TENSOR_DATA_TYPE_FLOAT64, EWISE_TENSOR_DATA_TYPE_BFLOAT16,
        EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FN, EWISE_TENSOR_DATA_TYPE_FLOAT8E4M3FNUZ,
        EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2, EWISE_TENSOR_DATA_TYPE_FLOAT8E5M2FNUZ};
    const EWISE_NAN_POLICY policies[] = {EWISE_NAN_ZERO, EWISE_NAN_PROPAGATE};
    size_t p, t;
    int m;

    check_reference();
    printf("ops: device %s, library %s\n", test_kind_name(), ewise_version());

    for (p = 0; p < 2; p++) {
        EWISE_NAN_POLICY policy = policies[p];
        ewise_device *strict = test_device(DML_FEATURE_LEVEL_6_4, 0, policy);
        ewise_device *extended = test_device(DML_FEATURE_LEVEL_6_4, 1, policy);
        const char *strict_name = policy == EWISE_NAN_ZERO ? "6_4 strict, nan zero" : "6_4 strict, nan propagate";
        const char *extended_name = policy == EWISE_NAN_ZERO ? "6_4 extensions, nan zero"
                                                              : "6_4 extensions, nan propagate";
        for (t = 0; t < sizeof strict_sign_types / sizeof strict_sign_types[0]; t++) {
            op_case c;
            c.device_name = strict_name;
            c.is_sign = 1;
            c.type = strict_sign_types[t];
            c.out_type = c.type;
            c.policy = policy;
            c.mode = DML_IS_INFINITY_MODE_EITHER;
            run_case(strict, &c);
            /* floats also on the extended device: the policy is the device's either way */
            if (ref_is_float(c.type)) {
                c.device_name = extended_name;
                run_case(extended, &c);
            }
        }
        for (t = 0; t < sizeof extended_sign_types / sizeof extended_sign_types[0]; t++) {
            op_case c;
            c.device_name = extended_name;
            c.is_sign = 1;
            c.type = extended_sign_types[t];
            c.out_type = c.type;
            c.policy = policy;
            c.mode = DML_IS_INFINITY_MODE_EITHER;
            run_case(extended, &c);
        }
        /* IS_INFINITY does not depend on the NaN policy: once is enough. */
        if (policy == EWISE_NAN_ZERO) {
            for (m = 0; m < 3; m++) {
                for (t = 0; t < sizeof strict_inf_types / sizeof strict_inf_types[0]; t++) {
                    op_case c;
                    c.device_name = strict_name;
                    c.is_sign = 0;
                    c.type = strict_inf_types[t];
                    c.out_type = DML_TENSOR_DATA_TYPE_UINT8;
                    c.policy = policy;
                    c.mode = (DML_IS_INFINITY_MODE)m;
                    run_case(strict, &c);
                }
                for (t = 0; t < sizeof extended_inf_types / sizeof extended_inf_types[0]; t++) {
                    op_case c;
                    c.device_name = extended_name;
                    c.is_sign = 0;
                    c.type = extended_inf_types[t];
                    c.out_type = DML_TENSOR_DATA_TYPE_UINT8;
                    c.policy = policy;
                    c.mode = (DML_IS_INFINITY_MODE)m;
                    run_case(extended, &c);
                    /* ONNX's bool output, one byte 0 or 1 (operator path only) */
                    if (t < 2) {
                        c.out_type = EWISE_TENSOR_DATA_TYPE_BOOL;
                        run_case(extended, &c);
                    }
                }
            }
        }
        ewise_release_device(strict);
        ewise_release_device(extended);
    }
    printf("ops: %u comparisons, %" PRIu64 " elements\n", comparisons, compared_elements);
    return check_finish("ops");
}
