/* set_aside.c - a damaged blob into a quarantine, for repair (set_aside.h). */
#include "ollama_audit/set_aside.h"
#include "space/plan_file_private.h"
#include "space/quarantine.h"
#include "base/platform.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct oa_set_aside {
	const oa_store *s;
	const char *command;
	quarantine q;
};

oa_set_aside *oa_set_aside_begin(const oa_store *s, const char *dir, bool no_lock, const char *command,
                                 const char *const *models, size_t n_models, char *err, size_t errlen)
{
	oa_set_aside *a = oa_xcalloc(1, sizeof *a);
	a->s = s;
	a->command = command;
	if (quarantine_open(s, dir, no_lock, &a->q, err, errlen) < 0) {
		free(a);
		return NULL;
	}
	json_t *names = json_array();
	for (size_t i = 0; i < n_models; i++)
		json_array_append_new(names, json_string(models[i]));
	quarantine_begin_op(&a->q, command, NULL, names, 0, 0);
	return a;
}

int oa_set_aside_blob(oa_set_aside *a, const char *name, const char *model, bool keep, char *err, size_t errlen)
{
	struct stat st;
	if (fstatat(a->s->blobs_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) {
		oa_seterr(err, errlen, "blobs/%s: %s", name, errno ? strerror(errno) : "not a regular file");
		return -1;
	}
	char *path = oa_xasprintf("blobs/%s", name);
	oa_plan_entry e = { .path = path, .category = "damaged", .type = 'f', .dev = (uint64_t)st.st_dev,
	                    .ino = (uint64_t)st.st_ino, .nlink = (uint64_t)st.st_nlink, .size = (int64_t)st.st_size,
	                    .mtime_ns = oa_stat_mtime_ns(&st), .allocated = (uint64_t)st.st_blocks * 512,
	                    .model = (char *)model, .note = "not what its name says: set aside by repair" };
	if (strncmp(name, "sha256-", 7) == 0 && strlen(name) == 71)
		memcpy(e.hex, name + 7, 65);
	json_t *x = quarantine_add(&a->q, plan_entry_json(&e), path, a->command);
	free(path);
	if (quarantine_flush(&a->q, err, errlen) < 0)
		return -1;
	const char *stored = json_string_value(json_object_get(x, "stored")) + strlen("files/");
	int rc = keep ? linkat(a->s->blobs_fd, name, a->q.files_fd, stored, 0)
	              : renameat(a->s->blobs_fd, name, a->q.files_fd, stored);
	if (rc < 0) {
		oa_seterr(err, errlen, "cannot move blobs/%s into %s: %s", name, a->q.dir, strerror(errno));
		quarantine_set_state(&a->q, x, "failed");
		return -1;
	}
	quarantine_set_state(&a->q, x, "moved");
	return quarantine_flush(&a->q, err, errlen);
}

int oa_set_aside_end(oa_set_aside *a, char *op, char *err, size_t errlen)
{
	int rc = quarantine_commit(&a->q, err, errlen);
	snprintf(op, 40, "%s", a->q.op);
	quarantine_close(&a->q);
	free(a);
	return rc;
}
