/*
 * crossing.c: threads executing one compiled operator between two buffers in opposite
 * directions (A -> B on some threads, B -> A on the others) on the device EWISE_C_DEVICE
 * names. Every path that holds two buffers locks them in one order, so this ends; a
 * watchdog fails the program (instead of hanging the suite) when it does not: SIGALRM,
 * where the system has it (not on Windows, where scripts/windows-c-test.sh's timeout is
 * the watchdog).
 */
#include "check.h"

#include <pthread.h>
#include <signal.h>

#define N 4096u
#define THREADS 8
#define ROUNDS 200
#define WATCHDOG_SECONDS 120

typedef struct crossing {
    ewise_compiled_operator *compiled;
    ewise_buffer *from, *to;
    int failures;
} crossing;

#ifdef SIGALRM
static void on_alarm(int signal)
{
    static const char text[] = "FAIL crossing: no progress in " "120" " s: threads running A -> B and B -> A deadlocked\n";
    (void)signal;
    (void)!write(2, text, sizeof text - 1);
    _exit(1);
}
#endif

static void *run(void *arg)
{
    crossing *c = (crossing *)arg;
    int k;
    for (k = 0; k < ROUNDS; k++) {
        EWISE_BUFFER_BINDING in = test_binding(c->from, 0, N * 4);
        EWISE_BUFFER_BINDING out = test_binding(c->to, 0, N * 4);
        EWISE_STATUS s = ewise_execute(c->compiled, &in, &out);
        if (s != EWISE_OK) {
            fprintf(stderr, "FAIL crossing: ewise_execute gave %s: %s\n", status_name(s), ewise_last_error());
            c->failures++;
            break;
        }
    }
    return NULL;
}

int main(void)
{
    ewise_device *device = test_device(DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    test_tensor t;
    ewise_operator *op = NULL;
    ewise_compiled_operator *compiled;
    ewise_buffer *a = NULL, *b = NULL;
    static float data[N], back[N];
    crossing work[THREADS];
    pthread_t threads[THREADS];
    uint32_t i;
    int k;

#ifdef SIGALRM
    signal(SIGALRM, on_alarm);
    alarm(WATCHDOG_SECONDS);
#endif
    test_tensor_1d(&t, DML_TENSOR_DATA_TYPE_FLOAT32, N);
    compiled = TEST_COMPILE(device, test_create_sign(device, &t, &t, &op), &op);
    CHECK_OK(ewise_create_buffer(device, N * 4, &a));
    CHECK_OK(ewise_create_buffer(device, N * 4, &b));
    for (i = 0; i < N; i++) {
        data[i] = (float)i - (float)(N / 2);
    }
    CHECK_OK(ewise_buffer_write(a, 0, data, N * 4));
    CHECK_OK(ewise_buffer_write(b, 0, data, N * 4));
    for (k = 0; k < THREADS; k++) {
        work[k].compiled = compiled;
        work[k].from = k % 2 == 0 ? a : b;
        work[k].to = k % 2 == 0 ? b : a;
        work[k].failures = 0;
        CHECK(pthread_create(&threads[k], NULL, run, &work[k]) == 0, "pthread_create %d", k);
    }
    for (k = 0; k < THREADS; k++) {
        CHECK(pthread_join(threads[k], NULL) == 0, "pthread_join %d", k);
        CHECK(work[k].failures == 0, "thread %d failed", k);
    }
#ifdef SIGALRM
    alarm(0);
#endif
    /* whichever order they ran in, both buffers hold the signs of the first data */
    CHECK_OK(ewise_buffer_read(a, 0, back, N * 4));
    for (i = 0; i < N; i++) {
        float want = data[i] < 0 ? -1.0f : (data[i] > 0 ? 1.0f : 0.0f);
        CHECK(back[i] == want, "a[%u] = %g, want %g", i, (double)back[i], (double)want);
        if (back[i] != want) {
            break;
        }
    }
    ewise_release_buffer(a);
    ewise_release_buffer(b);
    ewise_release_compiled_operator(compiled);
    ewise_release_device(device);
    printf("%s: %d threads x %d executions, both directions\n", test_kind_name(), THREADS, ROUNDS);
    return check_finish("crossing");
}
