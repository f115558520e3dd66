#ifndef CHILD_PROCESS_H
#define CHILD_PROCESS_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (both NULL-terminated) in `directory` (NULL: this one),
/// with `stdin_fd`, `stdout_fd` and `stderr_fd` as its descriptors 0, 1 and 2, in a process group
/// of its own, with every signal at its default action and unblocked, and no other descriptor
/// of this process open. On success stores the child's id in `*pid` and returns 0; otherwise
/// returns the errno of what failed (dup, chdir, exec, ...) and no child is left running.
///
/// Written for the tests because swift-corelibs-foundation's Process reads past the end of a
/// readdir buffer while it lists /proc/self/fd, which crashes processes with many descriptors open.
int child_process_spawn(const char *path, char *const argv[], char *const envp[], const char *directory, int stdin_fd,
                        int stdout_fd, int stderr_fd, pid_t *pid);

/// A pipe whose both ends are closed on exec; returns 0 or errno.
int child_process_pipe(int ends[2]);

#endif
