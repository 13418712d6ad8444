/*
 * fork.c: a process forked while another thread of its parent is inside ewise (a
 * one-call ewise_sign streaming through the device's kept stream, and executions
 * holding two buffers). On a GPU device the child's calls must be refused at once with
 * EWISE_ERROR_DEVICE_UNAVAILABLE (the device belongs to the parent, whose thread may
 * hold ewise's locks), never wait on a lock the parent held at the fork; on the CPU they
 * complete. The child has a watchdog, the parent a deadline.
 *
 * unix-only: fork(2) and waitpid(2) have no Windows counterpart
 */
#include "check.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define BIG (4u << 20) /* elements of the streaming call: 16 MiB of FLOAT32 */
#define N 4096u
#define FORKS 4

static ewise_device *device;
static ewise_compiled_operator *compiled;
static ewise_buffer *a, *b;
static float *big_in, *big_out;
static volatile int stop;

static void *busy(void *unused)
{
    (void)unused;
    while (!stop) {
        EWISE_BUFFER_BINDING in = test_binding(a, 0, N * 4), out = test_binding(b, 0, N * 4);
        (void)ewise_sign(device, DML_TENSOR_DATA_TYPE_FLOAT32, big_in, big_out, BIG);
        (void)ewise_execute(compiled, &in, &out);
    }
    return NULL;
}

/* The child: every call on the parent's device answers at once. */
static int child(void)
{
    float x[N], y[N];
    uint32_t i;
    EWISE_STATUS want = test_is_gpu() ? EWISE_ERROR_DEVICE_UNAVAILABLE : EWISE_OK;
    EWISE_BUFFER_BINDING in = test_binding(a, 0, N * 4), out = test_binding(b, 0, N * 4);
    EWISE_STATUS got[4];
    int k, failures = 0;
    alarm(30);
    for (i = 0; i < N; i++) {
        x[i] = (float)i - 7.0f;
    }
    got[0] = ewise_sign(device, DML_TENSOR_DATA_TYPE_FLOAT32, x, y, N);
    /* The buffers the parent's thread was using: on a GPU refused before any lock; on
     * the CPU, as with any fork of a threaded process, objects another thread was using
     * at the fork are not for the child (their locks may stay held), so only the
     * one-call function runs there. */
    if (test_is_gpu()) {
        got[1] = ewise_execute(compiled, &in, &out);
        got[2] = ewise_buffer_write(a, 0, x, N * 4);
        got[3] = ewise_buffer_read(b, 0, y, N * 4);
    } else {
        got[1] = got[2] = got[3] = EWISE_OK;
        if (y[0] != -1.0f || y[7] != 0.0f || y[8] != 1.0f) {
            fprintf(stderr, "FAIL fork: ewise_sign in the child gave wrong values\n");
            failures++;
        }
    }
    for (k = 0; k < 4; k++) {
        if (got[k] != want) {
            fprintf(stderr, "FAIL fork: call %d in the child gave %s, want %s\n", k, status_name(got[k]),
                    status_name(want));
            failures++;
        }
    }
    if (want == EWISE_ERROR_DEVICE_UNAVAILABLE) {
        const char *m = ewise_last_error();
        if (m == NULL || strstr(m, "fork") == NULL) {
            fprintf(stderr, "FAIL fork: the child's message \"%s\" does not say fork\n", m == NULL ? "(NULL)" : m);
            failures++;
        }
    }
    /* a device of the child's own works */
    {
        EWISE_DEVICE_DESC desc = test_device_desc(EWISE_DEVICE_CPU, DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
        ewise_device *own = NULL;
        if (ewise_create_device(&desc, &own) != EWISE_OK ||
            ewise_sign(own, DML_TENSOR_DATA_TYPE_FLOAT32, x, y, N) != EWISE_OK || y[0] != -1.0f ||
            y[7] != 0.0f || y[8] != 1.0f) {
            fprintf(stderr, "FAIL fork: a CPU device of the child's own: %s\n", ewise_last_error());
            failures++;
        }
        /* not released: _exit below, as a forked child of a threaded process does */
    }
    return failures == 0 ? 0 : 1;
}

int main(void)
{
    test_tensor t;
    ewise_operator *op = NULL;
    pthread_t thread;
    int k;

    device = test_device(DML_FEATURE_LEVEL_6_4, 0, EWISE_NAN_ZERO);
    test_tensor_1d(&t, DML_TENSOR_DATA_TYPE_FLOAT32, N);
    compiled = TEST_COMPILE(device, test_create_sign(device, &t, &t, &op), &op);
    CHECK_OK(ewise_create_buffer(device, N * 4, &a));
    CHECK_OK(ewise_create_buffer(device, N * 4, &b));
    big_in = (float *)calloc(BIG, 4);
    big_out = (float *)calloc(BIG, 4);
    CHECK(big_in != NULL && big_out != NULL, "out of memory");
    CHECK(pthread_create(&thread, NULL, busy, NULL) == 0, "pthread_create");
    for (k = 0; k < FORKS; k++) {
        struct timespec pause = {0, 20 * 1000 * 1000};
        pid_t pid;
        int status = 0, waited = 0;
        nanosleep(&pause, NULL);
        pid = fork();
        if (pid == 0) {
            _exit(child());
        }
        CHECK(pid > 0, "fork");
        while (pid > 0 && waitpid(pid, &status, WNOHANG) == 0) {
            nanosleep(&pause, NULL);
            if (++waited > 60 * 50) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                CHECK(0, "fork %d: the child hung", k);
                break;
            }
        }
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork %d: the child %s %d", k,
              WIFEXITED(status) ? "exited with" : "was killed by signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    }
    stop = 1;
    CHECK(pthread_join(thread, NULL) == 0, "pthread_join");
    ewise_release_buffer(a);
    ewise_release_buffer(b);
    ewise_release_compiled_operator(compiled);
    ewise_release_device(device);
    free(big_in);
    free(big_out);
    printf("%s: %d forks while a thread streamed and executed\n", test_kind_name(), FORKS);
    return check_finish("fork");
}
