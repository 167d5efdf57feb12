/* files.h - the file operations export, import and repair share: walking
 * to a directory below a root without following a symlink, making the
 * missing ones, writing a whole buffer, a unique temporary name in blobs/,
 * removing a tree we made. Private to src/carry/. */
#ifndef OLLAMA_AUDIT_CARRY_FILES_H
#define OLLAMA_AUDIT_CARRY_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Who new files and directories belong to: as root, the owner of the
 * directory they go in (the store's); otherwise whoever runs us. */
typedef struct carry_owner {
	bool set;            /* chown what we make */
	uid_t uid;
	gid_t gid;
} carry_owner;
/* The owner a directory open at fd gives new entries (set only as root). */
void carry_owner_of(int fd, carry_owner *o);

/* The directory `rel` (a/b/c, relative to root_fd) opened, each component
 * walked without following a symlink; with `make` the missing ones are
 * created (0755, chowned to `o`). -1 with errno (ENOTDIR: a component is
 * not a directory, or is a symlink). */
int carry_open_dir(int root_fd, const char *rel, bool make, const carry_owner *o);
/* The parent directory of `rel` opened as carry_open_dir does; *leaf
 * points at its last component (inside rel). */
int carry_open_parent(int root_fd, const char *rel, bool make, const carry_owner *o, const char **leaf);

/* Bytes written between two writebacks started (oa_writeback_start). */
#define CARRY_WRITEBACK_EVERY (16u << 20)

/* A name of the temp class (below), new in this process. */
void carry_temp_name(char *name, size_t len);
/* A new file in dirfd under a name of the temp class that prune and the
 * server's start-up prune remove (blobs/sha256-<digits>, as `ollama
 * create` names its own), opened O_RDWR|O_EXCL, mode 0600 until it is
 * done. name: at least 40 bytes. -1 with errno. */
int carry_temp_create(int dirfd, char *name, size_t len);

/* Make a finished temporary file what a store's blob is: mode 0644, the
 * owner o, a fresh mtime, on disk. 0, or -1 with errno. */
int carry_temp_seal(int fd, const carry_owner *o);

/* Put temporary `tmp` of from_fd in place as `name` in to_fd without
 * replacing anything: a hard link (the caller removes the temporary name).
 * 0 done, 1 `name` exists already, -1 errno (EXDEV: another file system). */
int carry_place(int from_fd, const char *tmp, int to_fd, const char *name);

/* Remove the directory `name` in dirfd and everything in it (no symlink
 * followed). */
void carry_remove_tree(int dirfd, const char *name);

#endif
