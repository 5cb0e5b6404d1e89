/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A lock fought over, for tests/cli/prof.sh: the thread "prof-holder" takes
 * a mutex and keeps it until the thread "prof-waiter" sits blocked in the
 * kernel on it (its /proc syscall is futex), then lets it go. So the
 * waiter's pthread_mutex_lock finds the mutex taken every time, whatever
 * the machine's load, and vkcu-prof must report it from contender().
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t fought = PTHREAD_MUTEX_INITIALIZER;
static atomic_int waiter_tid;

/* The waiter is in futex(2) (syscall 202 on x86-64). */
static int blocked(int tid)
{
    char path[64], line[64] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(line, sizeof(line), f) && !strncmp(line, "202 ", 4);
    fclose(f);
    return ok;
}

__attribute__((noinline)) static void contender(void)
{
    pthread_mutex_lock(&fought);
    pthread_mutex_unlock(&fought);
}

static void *waiter_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "prof-waiter");
    atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
    contender();
    return NULL;
}

int main(void)
{
    pthread_t w;
    struct timespec nap = { 0, 1000000 };
    pthread_setname_np(pthread_self(), "prof-holder");
    pthread_mutex_lock(&fought);
    if (pthread_create(&w, NULL, waiter_main, NULL))
        return 1;
    /* bounded only so that a broken build cannot hang: about 60 s */
    int k = 0;
    for (; k < 60000 && !(atomic_load(&waiter_tid) && blocked(atomic_load(&waiter_tid))); k++)
        nanosleep(&nap, NULL);
    pthread_mutex_unlock(&fought);
    pthread_join(w, NULL);
    printf("%s\n", k < 60000 ? "the waiter blocked on the mutex" : "the waiter never blocked");
    return k < 60000 ? 0 : 1;
}
