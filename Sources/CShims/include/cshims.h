#ifndef PASSBRIDGE_CSHIMS_H
#define PASSBRIDGE_CSHIMS_H
// What Glibc hides from Swift: epoll, accept4, struct ucred, eventfd, mallopt, mallinfo2, nftw.
#include <malloc.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/// Peer credentials of a connected Unix socket (SO_PEERCRED). Returns 0 or -1 with errno set.
int cshims_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// Supplementary groups of a connected Unix socket's peer (SO_PEERGROUPS, Linux 4.13+): fills up to `capacity`
/// gids and returns their number, or -1 with errno set (ERANGE: more than `capacity`).
int cshims_peer_groups(int fd, gid_t *groups, int capacity);

/// accept4(2) with SOCK_CLOEXEC (and SOCK_NONBLOCK when nonblocking is non-zero).
int cshims_accept(int fd, int nonblocking);

/// epoll_create1(EPOLL_CLOEXEC).
int cshims_epoll_create(void);

/// epoll_ctl(2) with the event's data set to `token` (epoll_event is packed on x86_64, so Swift does not touch it).
int cshims_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token);

/// epoll_wait(2) into parallel arrays of tokens and event masks; returns the count, or -1 with errno set.
int cshims_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int max, int timeout_ms);

/// A non-blocking, close-on-exec eventfd used to wake an epoll loop.
int cshims_eventfd(void);

/// Adds 1 to an eventfd (wakes its reader).
void cshims_eventfd_signal(int fd);

/// Resets an eventfd to zero.
void cshims_eventfd_drain(int fd);

/// Restricts the calling thread (and processes it starts later) to one CPU; 0 or -1 with errno set.
int cshims_pin_to_cpu(int cpu);

/// Removes `path` and, when it is a directory, everything under it (nftw(3), depth first, symbolic links not
/// followed); 0, or -1 with errno set at the first entry that could not be removed (the walk stops there).
int cshims_remove_tree(const char *path);
#endif
