/* Worker threads of the guard's own (a push's check, a digest beside the
 * matcher), which must never take a signal: the loop's thread handles
 * them, through libevent. */
#ifndef EG_THREAD_H
#define EG_THREAD_H

#include <pthread.h>

/* pthread_create(t, NULL, fn, arg) with every signal blocked in the new
 * thread (the caller's mask is left as it was). Returns pthread_create's
 * result: 0, or an errno value. */
int thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
