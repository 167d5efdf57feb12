/* oom.c - see ollama_audit/oom.h. */
#include "ollama_audit/oom.h"
#include "base/oom_private.h"

#include <stdio.h>
#include <stdlib.h>

static oa_oom_handler oom_handler;

oa_oom_handler oa_set_oom_handler(oa_oom_handler handler)
{
	oa_oom_handler old = oom_handler;
	oom_handler = handler;
	return old;
}

void oa_out_of_memory(size_t bytes)
{
	if (oom_handler)
		oom_handler(bytes);
	/* No handler, or it returned: a library must not pick an exit status
	 * for its caller, and cannot go on without the memory. */
	fputs("libollama_audit: out of memory\n", stderr);
	abort();
}
