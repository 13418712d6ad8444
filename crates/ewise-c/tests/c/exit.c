/*
 * exit.c: calls through ewise's C ABI at the ends of a thread's and a process's life,
 * where C programs run their cleanup: a pthread key's destructor (which runs after the
 * thread's thread-local storage destructors) and an atexit handler (which runs after
 * the main thread's). Each earlier had a refused call, so ewise's per-thread message
 * existed before the thread began to end.
 *
 * Every entry point must answer a status there, ewise_last_error() must give this
 * thread's message (never a dangling pointer), and the work must be right.
 */
#include "check.h"

#include <pthread.h>

#define N 4096u

/* What the exit-time calls found: 0 when all held, else the count of failures. */
static int key_failures = -1;
static ewise_device *exit_device = NULL;
static pthread_key_t key;

/* SIGN over N FLOAT32 elements on `device`, through ewise_sign and through a compiled
 * operator; the number of wrong answers (statuses, messages or bits). */
static int exit_time_work(ewise_device *device, const char *where)
{
    int failures = 0;
    float in[64], out[64];
    uint64_t state = 7;
    uint32_t i;
    ewise_device *none = NULL;
    EWISE_STATUS s;
    const char *m;

    /* a refused call: a status and its message */
    s = ewise_create_device(NULL, &none);
    m = ewise_last_error();
    if (s != EWISE_ERROR_INVALID_ARGUMENT || m == NULL || strstr(m, "desc") == NULL) {
        fprintf(stderr, "FAIL %s: ewise_create_device(NULL) gave %s, message \"%s\"\n", where,
                status_name(s), m == NULL ? "(NULL)" : m);
        failures++;
    }
    for (i = 0; i < 64; i++) {
        uint32_t bits = (uint32_t)test_interesting_bits(DML_TENSOR_DATA_TYPE_FLOAT32, &state);
        memcpy(&in[i], &bits, 4);
    }
    s = ewise_sign(device, DML_TENSOR_DATA_TYPE_FLOAT32, in, out, 64);
    m = ewise_last_error();
    if (s != EWISE_OK || m == NULL || m[0] != '\0') {
        fprintf(stderr, "FAIL %s: ewise_sign gave %s, message \"%s\"\n", where, status_name(s),
                m == NULL ? "(NULL)" : m);
        failures++;
    } else {
        for (i = 0; i < 64; i++) {
            uint32_t got, x;
            memcpy(&got, &out[i], 4);
            memcpy(&x, &in[i], 4);
            if (got != (uint32_t)ref_sign(DML_TENSOR_DATA_TYPE_FLOAT32, x, EWISE_NAN_ZERO)) {
                fprintf(stderr, "FAIL %s: sign(0x%08x) gave 0x%08x\n", where, x, got);
                failures++;
                break;
            }
        }
    }
    {
        test_tensor t;
        ewise_operator *op = NULL;
        ewise_compiled_operator *compiled = NULL;
        ewise_buffer *buffer = NULL;
        EWISE_BUFFER_BINDING b;
        float back[N];
        test_tensor_1d(&t, DML_TENSOR_DATA_TYPE_FLOAT32, N);
        s = test_create_sign(device, &t, &t, &op);
        if (s == EWISE_OK) {
            s = ewise_compile_operator(device, op, DML_EXECUTION_FLAG_NONE, &compiled);
        }
        if (s == EWISE_OK) {
            s = ewise_create_buffer(device, N * 4, &buffer);
        }
        for (i = 0; i < N; i++) {
            back[i] = (float)i - 100.0f;
        }
        if (s == EWISE_OK) {
            s = ewise_buffer_write(buffer, 0, back, N * 4);
        }
        b = test_binding(buffer, 0, N * 4);
        if (s == EWISE_OK) {
            s = ewise_execute(compiled, &b, &b);
        }
        if (s == EWISE_OK) {
            s = ewise_buffer_read(buffer, 0, back, N * 4);
        }
        if (s != EWISE_OK) {
            m = ewise_last_error();
            fprintf(stderr, "FAIL %s: the compiled path gave %s: \"%s\"\n", where, status_name(s),
                    m == NULL ? "(NULL)" : m);
            failures++;
        } else {
            for (i = 0; i < N; i++) {
                float want = i < 100 ? -1.0f : (i == 100 ? 0.0f : 1.0f);
                if (back[i] != want) {
                    fprintf(stderr, "FAIL %s: element %u gave %g\n", where, i, (double)back[i]);
                    failures++;
                    break;
                }
            }
        }
        /* a refused execution: the message is this thread's and readable */
        b = test_binding(buffer, 0, 4);
        s = ewise_execute(compiled, &b, &b);
        m = ewise_last_error();
        if (s != EWISE_ERROR_INVALID_ARGUMENT || m == NULL || m[0] == '\0') {
            fprintf(stderr, "FAIL %s: a short binding gave %s, message \"%s\"\n", where,
                    status_name(s), m == NULL ? "(NULL)" : m);
            failures++;
        }
        ewise_release_buffer(buffer);
        ewise_release_compiled_operator(compiled);
        ewise_release_operator(op);
    }
    return failures;
}

static void key_destructor(void *value)
{
    ewise_device *device = (ewise_device *)value;
    const char *m = ewise_last_error();
    int failures = 0;
    /* the thread's last message, from before it began to end */
    if (m == NULL || strstr(m, "NULL") == NULL) {
        fprintf(stderr, "FAIL key destructor: the last message is \"%s\"\n", m == NULL ? "(NULL)" : m);
        failures++;
    }
    failures += exit_time_work(device, "key destructor");
    key_failures = failures;
}

static void *thread_body(void *device)
{
    ewise_device *none = NULL;
    /* a refused call, so that this thread's message storage is in use */
    (void)ewise_create_device(NULL, &none);
    pthread_setspecific(key, device);
    return NULL;
}

static void at_exit(void)
{
    const char *m = ewise_last_error();
    int failures = 0;
    if (m == NULL || strstr(m, "element_count") == NULL) {
        fprintf(stderr, "FAIL atexit: the main thread's last message is \"%s\"\n", m == NULL ? "(NULL)" : m);
        failures++;
    }
    failures += exit_time_work(exit_device, "atexit");
    ewise_release_device(exit_device);
    if (failures != 0) {
        fprintf(stderr, "FAIL exit (%s): %d failure(s) in the atexit handler\n", test_kind_name(), failures);
        fflush(stderr);
        _exit(1);
    }
    printf("PASS exit (atexit)\n");
    fflush(stdout);
}

int main(void)
{
    ewise_device *device = test_device(DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    pthread_t thread;
    float x = 1.0f;

    CHECK(pthread_key_create(&key, key_destructor) == 0, "pthread_key_create");
    CHECK(pthread_create(&thread, NULL, thread_body, device) == 0, "pthread_create");
    CHECK(pthread_join(thread, NULL) == 0, "pthread_join");
    CHECK(key_failures == 0, "the key destructor's calls: %d failure(s) (-1: it did not run)",
          key_failures);
    pthread_key_delete(key);

    /* the main thread's message before it ends: an overflowing count */
    CHECK_STATUS(ewise_sign(device, DML_TENSOR_DATA_TYPE_FLOAT32, &x, &x, UINT64_MAX),
                 EWISE_ERROR_INVALID_ARGUMENT);
    exit_device = device;
    CHECK(atexit(at_exit) == 0, "atexit");
    return check_finish("exit");
}
