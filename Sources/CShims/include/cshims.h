#ifndef PASSBRIDGE_CSHIMS_H
#define PASSBRIDGE_CSHIMS_H
// What Glibc hides from Swift: epoll, accept4, struct ucred, eventfd.
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/// Peer credentials of a connected Unix socket (SO_PEERCRED). Returns 0 or -1 with errno set.
int cshims_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// accept4(2) with SOCK_CLOEXEC (and SOCK_NONBLOCK when nonblocking is non-zero).
int cshims_accept(int fd, int nonblocking);
#endif
