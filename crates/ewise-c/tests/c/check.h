/*
 * check.h: what the functional C tests of ewise's C ABI share.
 *
 * Written from ewise.h and DirectML's documentation only, as a program outside the
 * project would be, plus docs/SEMANTICS.md for the bits:
 *   - CHECK / CHECK_OK / CHECK_STATUS: one line per failed check, a count, an exit code;
 *   - the device kind from the environment (EWISE_C_DEVICE=cpu|gpu) and the GPU skip rule;
 *   - tensor descriptions filled in as a DirectML program fills them (DMLCalcBufferTensorSize);
 *   - a scalar reference of SIGN and IS_INFINITY that decodes each value to a double and
 *     compares it with zero, never the bit tricks a fast kernel would use.
 *
 * C99; every function is static inline so that a program that does not use one gets no
 * warning. Each test program includes this header first, before any system header (it
 * asks for POSIX and, on glibc, the GNU extensions of <dlfcn.h> and <link.h>).
 */
#ifndef EWISE_TEST_CHECK_H
#define EWISE_TEST_CHECK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ewise.h"

/*
 * AddressSanitizer's defaults for these programs (each includes this header once).
 * allocator_may_return_null=1: a request no allocator can satisfy (errors.c asks
 * ewise_create_buffer for 2^62 bytes) returns NULL, as glibc's malloc does, so that
 * ewise can answer EWISE_ERROR_OUT_OF_MEMORY; by default ASan would end the program
 * ("requested allocation size exceeds maximum supported size"). ASAN_OPTIONS in the
 * environment still override this. Without AddressSanitizer nothing calls it.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* ------------------------------------------------------------------------------------ */
/* Checks                                                                               */
/* ------------------------------------------------------------------------------------ */

/* Number of failed checks so far (only the main thread counts; threads keep their own). */
static inline int *check_failures(void)
{
    static int failures = 0;
    return &failures;
}

static inline void check_fail_(const char *file, int line, const char *what, const char *fmt, ...)
{
    va_list args;
    fprintf(stderr, "FAIL %s:%d: %s: ", file, line, what);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    fflush(stderr);
    *check_failures() += 1;
}

/* CHECK(condition, printf-format, ...): the format is always given. */
#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            check_fail_(__FILE__, __LINE__, #cond, __VA_ARGS__);                           \
        }                                                                                  \
    } while (0)

static inline const char *status_name(EWISE_STATUS status)
{
    switch ((int)status) {
    case EWISE_OK: return "EWISE_OK";
    case EWISE_ERROR_INVALID_ARGUMENT: return "EWISE_ERROR_INVALID_ARGUMENT";
    case EWISE_ERROR_NOT_SUPPORTED: return "EWISE_ERROR_NOT_SUPPORTED";
    case EWISE_ERROR_OUT_OF_MEMORY: return "EWISE_ERROR_OUT_OF_MEMORY";
    case EWISE_ERROR_DEVICE_UNAVAILABLE: return "EWISE_ERROR_DEVICE_UNAVAILABLE";
    case EWISE_ERROR_INTERNAL: return "EWISE_ERROR_INTERNAL";
    default: return "(not an EWISE_STATUS)";
    }
}

/* A copy of the last message that CHECK_STATUS / CHECK_OK saw (this thread's). */
static inline char *check_message(void)
{
    static char message[4096];
    return message;
}

static inline void check_copy_message_(void)
{
    const char *m = ewise_last_error();
    char *copy = check_message();
    if (m == NULL) {
        strcpy(copy, "(NULL)");
        return;
    }
    strncpy(copy, m, 4095);
    copy[4095] = '\0';
}

/* Verbose mode (env EWISE_C_VERBOSE=1) prints every expected error's message. */
static inline int check_verbose(void)
{
    static int verbose = -1;
    if (verbose < 0) {
        const char *v = getenv("EWISE_C_VERBOSE");
        verbose = v != NULL && strcmp(v, "1") == 0;
    }
    return verbose;
}

/* The call returned EWISE_OK and left "" in ewise_last_error(). Returns 1 when so. */
static inline int check_ok_(const char *file, int line, const char *text, EWISE_STATUS got)
{
    const char *m = ewise_last_error();
    if (got != EWISE_OK) {
        check_copy_message_();
        check_fail_(file, line, text, "expected EWISE_OK, got %s (%d): \"%s\"", status_name(got),
                    (int)got, check_message());
        return 0;
    }
    if (m == NULL) {
        check_fail_(file, line, text, "EWISE_OK but ewise_last_error() is NULL");
        return 0;
    }
    if (m[0] != '\0') {
        check_copy_message_();
        check_fail_(file, line, text, "EWISE_OK but ewise_last_error() is \"%s\", not \"\"",
                    check_message());
        return 0;
    }
    check_message()[0] = '\0';
    return 1;
}

/* The call returned `want` (an error) with a non-empty message. Returns 1 when so. */
static inline int check_status_(const char *file, int line, const char *text, EWISE_STATUS got,
                                EWISE_STATUS want)
{
    check_copy_message_();
    if (got != want) {
        check_fail_(file, line, text, "expected %s, got %s (%d): \"%s\"", status_name(want),
                    status_name(got), (int)got, check_message());
        return 0;
    }
    if (ewise_last_error() == NULL || check_message()[0] == '\0') {
        check_fail_(file, line, text, "%s as expected, but the message is empty or NULL",
                    status_name(got));
        return 0;
    }
    if (check_verbose()) {
        printf("  ok %s -> %s: %s\n", text, status_name(got), check_message());
    }
    return 1;
}

#define CHECK_OK(expr) check_ok_(__FILE__, __LINE__, #expr, (expr))
#define CHECK_STATUS(expr, want) check_status_(__FILE__, __LINE__, #expr, (expr), (want))

/* The last message CHECK_STATUS saw contains `needle`. */
#define CHECK_MESSAGE_HAS(needle)                                                          \
    CHECK(strstr(check_message(), (needle)) != NULL, "message \"%s\" does not contain \"%s\"", \
          check_message(), (needle))

/* Ends the program: the summary line and the exit code. */
static inline int check_finish(const char *program)
{
    int failures = *check_failures();
    if (failures == 0) {
        printf("PASS %s\n", program);
        return 0;
    }
    fprintf(stderr, "FAIL %s: %d check(s) failed\n", program, failures);
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* Devices                                                                              */
/* ------------------------------------------------------------------------------------ */

/* EWISE_C_DEVICE=cpu (the default) or gpu. */
static inline EWISE_DEVICE_KIND test_kind(void)
{
    const char *env = getenv("EWISE_C_DEVICE");
    if (env == NULL || env[0] == '\0' || strcmp(env, "cpu") == 0) {
        return EWISE_DEVICE_CPU;
    }
    if (strcmp(env, "gpu") == 0) {
        return EWISE_DEVICE_GPU;
    }
    fprintf(stderr, "FAIL: EWISE_C_DEVICE=\"%s\": expected cpu or gpu\n", env);
    exit(2);
}

static inline int test_is_gpu(void)
{
    return test_kind() == EWISE_DEVICE_GPU;
}

static inline const char *test_kind_name(void)
{
    return test_is_gpu() ? "gpu" : "cpu";
}

static inline EWISE_DEVICE_DESC test_device_desc(EWISE_DEVICE_KIND kind, DML_FEATURE_LEVEL level,
                                                 uint32_t extensions, EWISE_NAN_POLICY policy)
{
    EWISE_DEVICE_DESC desc;
    memset(&desc, 0, sizeof desc);
    desc.Kind = kind;
    desc.FeatureLevel = level;
    desc.Extensions = extensions;
    desc.NanPolicy = policy;
    return desc;
}

#if defined(__linux__) && defined(__GLIBC__)
#include <dlfcn.h>
#include <link.h>

static inline int test_pin_library_(struct dl_phdr_info *info, size_t size, void *data)
{
    const char *name = info->dlpi_name;
    (void)size;
    (void)data;
    if (name != NULL && (strstr(name, "libvulkan_") != NULL || strstr(name, "VkLayer") != NULL ||
                         strstr(name, "_icd") != NULL || strstr(name, "libLLVM") != NULL)) {
        /* already loaded: this only marks it never to be unloaded */
        (void)dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    }
    return 0;
}
#endif

/*
 * Keeps the Vulkan driver libraries loaded until the process ends (glibc only).
 *
 * Why: the Vulkan loader dlclose()s the driver (Mesa's libvulkan_lvp.so) when ewise
 * destroys its instance. Memory that the driver keeps in its own globals (lavapipe: one
 * 128-byte realloc'd block per load) is then referenced from nowhere that LeakSanitizer
 * can still see, and the report's stack ends in "<unknown module>", which no
 * suppression can match by name (lsan.supp matches function, file or module names, and
 * the module is gone). Keeping the driver mapped keeps those blocks reachable from the
 * driver's globals, so they are not reported, while every allocation of ewise's own (all
 * freed or reachable from the program) is still checked. With the driver kept loaded,
 * no leak is reported and no suppression is needed.
 */
static inline void test_pin_gpu_driver(void)
{
#if defined(__linux__) && defined(__GLIBC__)
    dl_iterate_phdr(test_pin_library_, NULL);
#endif
}

/*
 * A device of the kind under test. When the GPU is asked for and none is there
 * (EWISE_ERROR_DEVICE_UNAVAILABLE), the program prints "SKIP: no GPU: <message>" and
 * exits 0, unless EWISE_REQUIRE_GPU=1 (then it fails). Any other failure ends the
 * program with a failure.
 */
static inline ewise_device *test_device(DML_FEATURE_LEVEL level, uint32_t extensions,
                                        EWISE_NAN_POLICY policy)
{
    EWISE_DEVICE_DESC desc = test_device_desc(test_kind(), level, extensions, policy);
    ewise_device *device = NULL;
    EWISE_STATUS status = ewise_create_device(&desc, &device);
    if (status == EWISE_OK && device != NULL) {
        if (desc.Kind == EWISE_DEVICE_GPU) {
            test_pin_gpu_driver();
        }
        return device;
    }
    if (status == EWISE_ERROR_DEVICE_UNAVAILABLE && desc.Kind == EWISE_DEVICE_GPU) {
        const char *require = getenv("EWISE_REQUIRE_GPU");
        if (require == NULL || strcmp(require, "1") != 0) {
            /* _exit: nothing ran, so no leak check either (the Vulkan loader has just
             * unloaded a driver that may have left blocks behind; see above) */
            printf("SKIP: no GPU: %s\n", ewise_last_error());
            fflush(stdout);
            _exit(0);
        }
        fprintf(stderr, "FAIL: EWISE_REQUIRE_GPU=1 and no GPU: %s\n", ewise_last_error());
        fflush(stderr);
        _exit(1);
    }
    fprintf(stderr, "FAIL: ewise_create_device(kind %s, level 0x%x, extensions %u, nan %d): %s: %s%s\n",
            test_kind_name(), (unsigned)level, (unsigned)extensions, (int)policy,
            status_name(status), ewise_last_error(), device == NULL ? "" : " (and a device)");
    exit(1);
}

/* ------------------------------------------------------------------------------------ */
/* Data types                                                                           */
/* ------------------------------------------------------------------------------------ */

/* Bytes per element; 0 for types without one (UNKNOWN, the 4-bit types, non-types). */
static inline size_t test_elem_size(DML_TENSOR_DATA_TYPE type)
{
    switch ((uint32_t)type) {
    case DML_TENSOR_DATA_TYPE_FLOAT64:
    case DML_TENSOR_DATA_TYPE_UINT64:
    case DML_TENSOR_DATA_TYPE_INT64:
        return 8;
    case DML_TENSOR_DATA_TYPE_FLOAT32:
    case DML_TENSOR_DATA_TYPE_UINT32:
    case DML_TENSOR_DATA_TYPE_INT32:
        return 4;
    case DML_TENSOR_DATA_TYPE_FLOAT16:
    case DML_TENSOR_DATA_TYPE_UINT16:
    case DML_TENSOR_DATA_TYPE_INT16:
    case 1000: /* EWISE_TENSOR_DATA_TYPE_BFLOAT16 */
        return 2;
    case DML_TENSOR_DATA_TYPE_UINT8:
    case DML_TENSOR_DATA_TYPE_INT8:
    case 1001: /* BOOL */
    case 1002: /* FLOAT8E4M3FN */
    case 1003: /* FLOAT8E4M3FNUZ */
    case 1004: /* FLOAT8E5M2 */
    case 1005: /* FLOAT8E5M2FNUZ */
        return 1;
    default:
        return 0;
    }
}

static inline const char *test_type_name(DML_TENSOR_DATA_TYPE type)
{
    switch ((uint32_t)type) {
    case DML_TENSOR_DATA_TYPE_UNKNOWN: return "UNKNOWN";
    case DML_TENSOR_DATA_TYPE_FLOAT32: return "FLOAT32";
    case DML_TENSOR_DATA_TYPE_FLOAT16: return "FLOAT16";
    case DML_TENSOR_DATA_TYPE_UINT32: return "UINT32";
    case DML_TENSOR_DATA_TYPE_UINT16: return "UINT16";
    case DML_TENSOR_DATA_TYPE_UINT8: return "UINT8";
    case DML_TENSOR_DATA_TYPE_INT32: return "INT32";
    case DML_TENSOR_DATA_TYPE_INT16: return "INT16";
    case DML_TENSOR_DATA_TYPE_INT8: return "INT8";
    case DML_TENSOR_DATA_TYPE_FLOAT64: return "FLOAT64";
    case DML_TENSOR_DATA_TYPE_UINT64: return "UINT64";
    case DML_TENSOR_DATA_TYPE_INT64: return "INT64";
    case DML_TENSOR_DATA_TYPE_UINT4: return "UINT4";
    case DML_TENSOR_DATA_TYPE_INT4: return "INT4";
    case 1000: return "BFLOAT16";
    case 1001: return "BOOL";
    case 1002: return "FLOAT8E4M3FN";
    case 1003: return "FLOAT8E4M3FNUZ";
    case 1004: return "FLOAT8E5M2";
    case 1005: return "FLOAT8E5M2FNUZ";
    default: return "(not a data type)";
    }
}

/* One element's bits, zero-extended, from memory in native byte order (any alignment). */
static inline uint64_t test_load(const void *p, size_t size)
{
    uint8_t b8;
    uint16_t b16;
    uint32_t b32;
    uint64_t b64;
    switch (size) {
    case 1: memcpy(&b8, p, 1); return b8;
    case 2: memcpy(&b16, p, 2); return b16;
    case 4: memcpy(&b32, p, 4); return b32;
    default: memcpy(&b64, p, 8); return b64;
    }
}

static inline void test_store(void *p, size_t size, uint64_t bits)
{
    uint8_t b8 = (uint8_t)bits;
    uint16_t b16 = (uint16_t)bits;
    uint32_t b32 = (uint32_t)bits;
    switch (size) {
    case 1: memcpy(p, &b8, 1); break;
    case 2: memcpy(p, &b16, 2); break;
    case 4: memcpy(p, &b32, 4); break;
    default: memcpy(p, &bits, 8); break;
    }
}

/* xorshift64*: the same pseudo-random patterns on every run. */
static inline uint64_t test_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(2685821657736338717);
}

/* ------------------------------------------------------------------------------------ */
/* The scalar reference (docs/SEMANTICS.md section 1, from the values, not the bits)    */
/* ------------------------------------------------------------------------------------ */

/* 2^e as a double, exactly, for small e. */
static inline double ref_pow2(int e)
{
    double r = 1.0;
    while (e > 0) {
        r *= 2.0;
        e--;
    }
    while (e < 0) {
        r *= 0.5;
        e++;
    }
    return r;
}

/*
 * A binary floating-point format with `exp_bits` exponent bits and `man_bits` mantissa
 * bits (IEEE 754 style: all-ones exponent is inf / NaN), decoded exactly to a double.
 * *nan is set for NaN.
 */
static inline double ref_decode_ieee(uint64_t bits, int exp_bits, int man_bits, int *nan)
{
    uint64_t man_mask = (UINT64_C(1) << man_bits) - 1;
    uint64_t exp_mask = (UINT64_C(1) << exp_bits) - 1;
    int negative = (int)((bits >> (exp_bits + man_bits)) & 1);
    uint64_t e = (bits >> man_bits) & exp_mask;
    uint64_t m = bits & man_mask;
    int bias = (int)(exp_mask >> 1);
    double magnitude;
    *nan = 0;
    if (e == exp_mask) {
        if (m != 0) {
            *nan = 1;
            return 0.0;
        }
        magnitude = HUGE_VAL;
    } else if (e == 0) {
        magnitude = (double)m * ref_pow2(1 - bias - man_bits);
    } else {
        magnitude = (double)(m | (UINT64_C(1) << man_bits)) * ref_pow2((int)e - bias - man_bits);
    }
    return negative ? -magnitude : magnitude;
}

/* Decodes one float element to a double (float32 and float64 through memcpy). */
static inline double ref_decode(DML_TENSOR_DATA_TYPE type, uint64_t bits, int *nan)
{
    float f;
    double d;
    uint32_t b32;
    switch ((uint32_t)type) {
    case DML_TENSOR_DATA_TYPE_FLOAT32:
        b32 = (uint32_t)bits;
        memcpy(&f, &b32, 4);
        *nan = f != f;
        return *nan ? 0.0 : (double)f;
    case DML_TENSOR_DATA_TYPE_FLOAT64:
        memcpy(&d, &bits, 8);
        *nan = d != d;
        return *nan ? 0.0 : d;
    case DML_TENSOR_DATA_TYPE_FLOAT16:
        return ref_decode_ieee(bits & 0xFFFF, 5, 10, nan);
    case 1000: /* BFLOAT16: float32's top half */
        return ref_decode_ieee(bits & 0xFFFF, 8, 7, nan);
    default:
        *nan = 0;
        return 0.0;
    }
}

static inline int ref_is_float(DML_TENSOR_DATA_TYPE type)
{
    return type == DML_TENSOR_DATA_TYPE_FLOAT32 || type == DML_TENSOR_DATA_TYPE_FLOAT16 ||
           type == DML_TENSOR_DATA_TYPE_FLOAT64 || (uint32_t)type == 1000;
}

/* The bit patterns of +1 and -1 (docs/SEMANTICS.md section 2). */
static inline uint64_t ref_one(DML_TENSOR_DATA_TYPE type, int negative)
{
    switch ((uint32_t)type) {
    case DML_TENSOR_DATA_TYPE_FLOAT32: return negative ? 0xBF800000u : 0x3F800000u;
    case DML_TENSOR_DATA_TYPE_FLOAT64:
        return negative ? UINT64_C(0xBFF0000000000000) : UINT64_C(0x3FF0000000000000);
    case DML_TENSOR_DATA_TYPE_FLOAT16: return negative ? 0xBC00u : 0x3C00u;
    case 1000: return negative ? 0xBF80u : 0x3F80u;
    default: {
        /* integers: 1, or -1 in the type's width (two's complement) */
        size_t size = test_elem_size(type);
        uint64_t mask = size == 8 ? ~UINT64_C(0) : ((UINT64_C(1) << (8 * size)) - 1);
        return negative ? mask : 1;
    }
    }
}

static inline int ref_is_signed_int(DML_TENSOR_DATA_TYPE type)
{
    return type == DML_TENSOR_DATA_TYPE_INT8 || type == DML_TENSOR_DATA_TYPE_INT16 ||
           type == DML_TENSOR_DATA_TYPE_INT32 || type == DML_TENSOR_DATA_TYPE_INT64;
}

/* SIGN of one element (bits zero-extended), as docs/SEMANTICS.md section 1 says. */
static inline uint64_t ref_sign(DML_TENSOR_DATA_TYPE type, uint64_t bits, EWISE_NAN_POLICY policy)
{
    size_t size = test_elem_size(type);
    if (ref_is_float(type)) {
        int nan = 0;
        double x = ref_decode(type, bits, &nan);
        if (nan) {
            return policy == EWISE_NAN_PROPAGATE ? bits : 0; /* +0 is all zero bits */
        }
        if (x < 0.0) {
            return ref_one(type, 1);
        }
        if (x > 0.0) {
            return ref_one(type, 0);
        }
        return 0; /* +0 and -0 give +0 */
    }
    if (ref_is_signed_int(type)) {
        /* the value, sign-extended from the type's width */
        int64_t v;
        switch (size) {
        case 1: v = (int8_t)(uint8_t)bits; break;
        case 2: v = (int16_t)(uint16_t)bits; break;
        case 4: v = (int32_t)(uint32_t)bits; break;
        default: {
            /* 64 bits: two's complement without an implementation-defined conversion */
            v = (bits >> 63) ? -1 - (int64_t)(~bits) : (int64_t)bits;
            break;
        }
        }
        if (v < 0) {
            return ref_one(type, 1);
        }
        return v > 0 ? 1 : 0;
    }
    return bits != 0 ? 1 : 0; /* unsigned */
}

/* IS_INFINITY of one element: 1 exactly for the infinities `mode` detects. */
static inline uint8_t ref_is_infinity(DML_TENSOR_DATA_TYPE type, uint64_t bits, DML_IS_INFINITY_MODE mode)
{
    int nan = 0;
    double x;
    switch ((uint32_t)type) {
    case 1004: /* FLOAT8E5M2: float16's top byte, so it has float16's infinities */
        x = ref_decode_ieee(bits & 0xFF, 5, 2, &nan);
        break;
    case 1002: /* FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2FNUZ: no infinities */
    case 1003:
    case 1005:
        return 0;
    default:
        x = ref_decode(type, bits, &nan);
        break;
    }
    if (nan) {
        return 0;
    }
    switch ((int)mode) {
    case DML_IS_INFINITY_MODE_EITHER: return x == HUGE_VAL || x == -HUGE_VAL;
    case DML_IS_INFINITY_MODE_POSITIVE: return x == HUGE_VAL;
    case DML_IS_INFINITY_MODE_NEGATIVE: return x == -HUGE_VAL;
    default: return 0;
    }
}

/*
 * An input element for layout and thread tests: pseudo-random bits, one time in three a
 * value that matters to these operators (zeros, ones, infinities, NaNs, subnormals,
 * integer extremes).
 */
static inline uint64_t test_interesting_bits(DML_TENSOR_DATA_TYPE type, uint64_t *state)
{
    static const uint64_t f32[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                   0xFF800001u, 0x00000001u, 0x807FFFFFu, 0x3F800000u, 0xBF800000u};
    static const uint64_t f16[] = {0x0000u, 0x8000u, 0x7C00u, 0xFC00u, 0x7E00u,
                                   0xFC01u, 0x0001u, 0x83FFu, 0x3C00u, 0xBC00u};
    static const uint64_t bf16[] = {0x0000u, 0x8000u, 0x7F80u, 0xFF80u, 0x7FC0u,
                                    0xFF81u, 0x0001u, 0x807Fu, 0x3F80u, 0xBF80u};
    static const uint64_t f64[] = {
        UINT64_C(0), UINT64_C(0x8000000000000000), UINT64_C(0x7FF0000000000000),
        UINT64_C(0xFFF0000000000000), UINT64_C(0x7FF8000000000000), UINT64_C(0xFFF0000000000001),
        UINT64_C(1), UINT64_C(0x800FFFFFFFFFFFFF), UINT64_C(0x3FF0000000000000),
        UINT64_C(0xBFF0000000000000)};
    static const uint64_t f8[] = {0x00u, 0x80u, 0x7Cu, 0xFCu, 0x7Fu, 0xFFu, 0x01u, 0x81u, 0x78u, 0xF8u};
    size_t size = test_elem_size(type);
    uint64_t r = test_random(state);
    uint64_t mask = size >= 8 ? ~UINT64_C(0) : ((UINT64_C(1) << (8 * size)) - 1);
    unsigned pick = (unsigned)(r >> 59) % 10u; /* independent of the low bits */
    if ((r >> 40) % 3u != 0) {
        return r & mask;
    }
    switch ((uint32_t)type) {
    case DML_TENSOR_DATA_TYPE_FLOAT32: return f32[pick];
    case DML_TENSOR_DATA_TYPE_FLOAT16: return f16[pick];
    case DML_TENSOR_DATA_TYPE_FLOAT64: return f64[pick];
    case 1000: return bf16[pick];
    case 1002: case 1003: case 1004: case 1005: return f8[pick];
    default: {
        /* integers: 0, 1, -1 / max, the signed minimum, the signed maximum */
        uint64_t top = UINT64_C(1) << (8 * size - 1);
        const uint64_t ints[] = {0, 1, mask, top, top - 1, 2, mask - 1, top + 1, 0, 1};
        return ints[pick];
    }
    }
}

/* ------------------------------------------------------------------------------------ */
/* Tensor descriptions, filled in as for DirectML                                       */
/* ------------------------------------------------------------------------------------ */

#define TEST_MAX_DIMS 16

/* A DML_TENSOR_DESC with its own arrays; do not copy one after test_tensor_init. */
typedef struct test_tensor {
    uint32_t sizes[TEST_MAX_DIMS];
    uint32_t strides[TEST_MAX_DIMS];
    DML_BUFFER_TENSOR_DESC buffer;
    DML_TENSOR_DESC desc;
} test_tensor;

/* DMLCalcBufferTensorSize: the minimum TotalTensorSizeInBytes (0 when it overflows). */
static inline uint64_t test_calc_size(DML_TENSOR_DATA_TYPE type, uint32_t dims, const uint32_t *sizes,
                                      const uint32_t *strides)
{
    uint64_t elements = 1;
    uint32_t i;
    uint64_t size = test_elem_size(type);
    if (strides == NULL) {
        for (i = 0; i < dims; i++) {
            elements *= sizes[i];
        }
    } else {
        uint64_t last = 0;
        for (i = 0; i < dims; i++) {
            last += (uint64_t)(sizes[i] - 1) * strides[i];
        }
        elements = last + 1;
    }
    return (elements * size + 3) & ~UINT64_C(3);
}

/* Fills `t`: `dims` sizes, strides or NULL (packed), the minimum total size. */
static inline void test_tensor_init(test_tensor *t, DML_TENSOR_DATA_TYPE type, uint32_t dims,
                                    const uint32_t *sizes, const uint32_t *strides)
{
    uint32_t i;
    memset(t, 0, sizeof *t);
    for (i = 0; i < dims && i < TEST_MAX_DIMS; i++) {
        t->sizes[i] = sizes[i];
        t->strides[i] = strides != NULL ? strides[i] : 0;
    }
    t->buffer.DataType = type;
    t->buffer.Flags = DML_TENSOR_FLAG_NONE;
    t->buffer.DimensionCount = dims;
    t->buffer.Sizes = t->sizes;
    t->buffer.Strides = strides != NULL ? t->strides : NULL;
    t->buffer.TotalTensorSizeInBytes = test_calc_size(type, dims, sizes, strides);
    t->buffer.GuaranteedBaseOffsetAlignment = 0;
    t->desc.Type = DML_TENSOR_TYPE_BUFFER;
    t->desc.Desc = &t->buffer;
}

/* A packed 1-D tensor of n elements. */
static inline void test_tensor_1d(test_tensor *t, DML_TENSOR_DATA_TYPE type, uint32_t n)
{
    test_tensor_init(t, type, 1, &n, NULL);
}

/* Creates SIGN(in -> out) on `device`. */
static inline EWISE_STATUS test_create_sign(ewise_device *device, const test_tensor *in,
                                            const test_tensor *out, ewise_operator **op)
{
    DML_ELEMENT_WISE_SIGN_OPERATOR_DESC sign;
    DML_OPERATOR_DESC desc;
    sign.InputTensor = &in->desc;
    sign.OutputTensor = &out->desc;
    desc.Type = DML_OPERATOR_ELEMENT_WISE_SIGN;
    desc.Desc = &sign;
    return ewise_create_operator(device, &desc, op);
}

/* Creates IS_INFINITY(in -> out, mode) on `device`. */
static inline EWISE_STATUS test_create_is_infinity(ewise_device *device, const test_tensor *in,
                                                   const test_tensor *out, DML_IS_INFINITY_MODE mode,
                                                   ewise_operator **op)
{
    DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC inf;
    DML_OPERATOR_DESC desc;
    inf.InputTensor = &in->desc;
    inf.OutputTensor = &out->desc;
    inf.InfinityMode = mode;
    desc.Type = DML_OPERATOR_ELEMENT_WISE_IS_INFINITY;
    desc.Desc = &inf;
    return ewise_create_operator(device, &desc, op);
}

/*
 * Compiles the operator that `created` (the status of its creation) made in *op, then
 * releases the uncompiled one. NULL (and a failed check) on error. Use TEST_COMPILE.
 */
static inline ewise_compiled_operator *test_compile_(const char *file, int line, ewise_device *device,
                                                     EWISE_STATUS created, ewise_operator **op)
{
    ewise_compiled_operator *compiled = NULL;
    if (!check_ok_(file, line, "create operator", created)) {
        ewise_release_operator(*op);
        *op = NULL;
        return NULL;
    }
    if (!check_ok_(file, line, "ewise_compile_operator",
                   ewise_compile_operator(device, *op, DML_EXECUTION_FLAG_NONE, &compiled))) {
        compiled = NULL;
    }
    ewise_release_operator(*op);
    *op = NULL;
    return compiled;
}

/* TEST_COMPILE(device, test_create_sign(device, &in, &out, &op), &op) */
#define TEST_COMPILE(device, created, op) test_compile_(__FILE__, __LINE__, (device), (created), (op))

static inline EWISE_BUFFER_BINDING test_binding(ewise_buffer *buffer, uint64_t offset, uint64_t size)
{
    EWISE_BUFFER_BINDING b;
    b.Buffer = buffer;
    b.Offset = offset;
    b.SizeInBytes = size;
    return b;
}

#endif /* EWISE_TEST_CHECK_H */
