/*
 * oom.h - what the library does when memory runs out. The library does not
 * recover from a failed allocation (it is the one error not reported to the
 * caller) but it never exits the process on its own: it calls the handler
 * set here, and aborts if there is none or it returns.
 */
#ifndef OLLAMA_AUDIT_OOM_H
#define OLLAMA_AUDIT_OOM_H

#include "ollama_audit/export.h"

#include <stddef.h>

/* Called with the size of the allocation that failed (SIZE_MAX when the
 * size itself overflowed). It should not return: exit, longjmp out of the
 * library's frames at the caller's own risk, or abort. */
typedef void (*oa_oom_handler)(size_t bytes);

/* Set the handler (NULL: the default, which prints "out of memory" on
 * stderr and aborts); returns the previous one. Not thread-safe: set it
 * before any other call. */
OA_EXPORT oa_oom_handler oa_set_oom_handler(oa_oom_handler handler);

#endif
