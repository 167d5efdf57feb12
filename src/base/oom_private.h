/* oom_private.h - the library's side of ollama_audit/oom.h: what a failed
 * allocation calls (util.c's oa_x* functions). Not installed. */
#ifndef OLLAMA_AUDIT_OOM_PRIVATE_H
#define OLLAMA_AUDIT_OOM_PRIVATE_H

#include <stddef.h>

/* Run the handler set with oa_set_oom_handler; abort if there is none or it
 * returns. bytes: the size that failed, SIZE_MAX when the size overflowed. */
void oa_out_of_memory(size_t bytes) __attribute__((noreturn));

#endif
