/*
 * pools.c: the memory a device keeps after its one-call functions (ewise_sign,
 * ewise_is_infinity) return is bounded, whatever the concurrency and the number of
 * types and modes called: a GPU device keeps at most 4 streams holding at most 128 MiB
 * (docs/C-API.md). Measured as the bytes the allocator has handed out and not taken
 * back (AddressSanitizer's count, which leaves its quarantine out; the resident set
 * without it: /proc/self/status's VmRSS, on Windows the working set), after calls from 8
 * threads at once and after one call per type and mode.
 */
#include "check.h"

#include <pthread.h>
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <psapi.h>
#endif

#define MIB (UINT64_C(1) << 20)
#define BIG ((uint32_t)(32 * MIB / 4)) /* FLOAT32 elements of a concurrent call */
#define EACH ((uint32_t)(8 * MIB))     /* bytes of input of a per-type call */
#define THREADS 8
#define KEPT (128 * MIB)
#define SLACK (32 * MIB)

size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static uint64_t resident(void)
{
#ifdef _WIN32
    /* No /proc (and under wine, /proc/self/status would be wineserver's). */
    PROCESS_MEMORY_COUNTERS counters;
    memset(&counters, 0, sizeof counters);
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) {
        return 0;
    }
    return (uint64_t)counters.WorkingSetSize;
#else
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kib = 0;
    if (f == NULL) {
        return 0;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "VmRSS: %" SCNu64, &kib) == 1) {
            break;
        }
    }
    fclose(f);
    return kib * 1024;
#endif
}

/* The bytes in use now, and what they are. */
static uint64_t in_use(const char **what)
{
    if (__sanitizer_get_current_allocated_bytes != NULL) {
        *what = "allocated bytes (AddressSanitizer)";
        return (uint64_t)__sanitizer_get_current_allocated_bytes();
    }
    *what = "resident bytes";
    return resident();
}

static ewise_device *device;

static void *one_big_call(void *failed)
{
    float *x = (float *)calloc(BIG, 4);
    if (x == NULL || ewise_sign(device, DML_TENSOR_DATA_TYPE_FLOAT32, x, x, BIG) != EWISE_OK) {
        *(int *)failed = 1;
    }
    free(x);
    return NULL;
}

static void check_bound(uint64_t base, const char *after)
{
    const char *what;
    uint64_t now = in_use(&what);
    uint64_t grown = now > base ? now - base : 0;
    printf("%s: %s: %" PRIu64 " MiB more than after the first call (bound %" PRIu64 " MiB)\n",
           test_kind_name(), after, grown / MIB, (KEPT + SLACK) / MIB);
    CHECK(grown <= KEPT + SLACK, "after %s the device holds %" PRIu64 " MiB more %s than after one call",
          after, grown / MIB, what);
}

int main(void)
{
    static const DML_TENSOR_DATA_TYPE types[] = {
        DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_FLOAT64,
        (DML_TENSOR_DATA_TYPE)1000,   DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_INT16,
        DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_INT64,   DML_TENSOR_DATA_TYPE_UINT8,
        DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_UINT32,  DML_TENSOR_DATA_TYPE_UINT64};
    static const DML_IS_INFINITY_MODE modes[] = {DML_IS_INFINITY_MODE_EITHER, DML_IS_INFINITY_MODE_POSITIVE,
                                                 DML_IS_INFINITY_MODE_NEGATIVE};
    pthread_t threads[THREADS];
    int failed[THREADS] = {0};
    uint64_t base;
    const char *what;
    unsigned char *in = (unsigned char *)calloc(EACH, 1), *out = (unsigned char *)calloc(EACH, 1);
    size_t t, m;
    int k;

    device = test_device(DML_FEATURE_LEVEL_6_4, 1, EWISE_NAN_ZERO);
    CHECK(in != NULL && out != NULL, "out of memory");
    one_big_call(&failed[0]);
    CHECK(failed[0] == 0, "the first call failed: %s", ewise_last_error());
    base = in_use(&what);

    for (k = 0; k < THREADS; k++) {
        CHECK(pthread_create(&threads[k], NULL, one_big_call, &failed[k]) == 0, "pthread_create");
    }
    for (k = 0; k < THREADS; k++) {
        CHECK(pthread_join(threads[k], NULL) == 0, "pthread_join");
        CHECK(failed[k] == 0, "thread %d's call failed", k);
    }
    check_bound(base, "8 concurrent 32 MiB calls");

    for (t = 0; t < sizeof types / sizeof types[0]; t++) {
        size_t size = test_elem_size(types[t]);
        CHECK_OK(ewise_sign(device, types[t], in, out, EACH / size));
        if (ref_is_float(types[t])) {
            for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
                CHECK_OK(ewise_is_infinity(device, types[t], modes[m], in, out, EACH / size));
            }
        }
    }
    check_bound(base, "one 8 MiB call per type and mode");

    ewise_release_device(device);
    free(in);
    free(out);
    return check_finish("pools");
}
