#define _GNU_SOURCE
#include <sched.h>
#include <errno.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/socket.h>
#include "cshims.h"

int cshims_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

int cshims_peer_groups(int fd, gid_t *groups, int capacity) {
#ifdef SO_PEERGROUPS
    socklen_t len = (socklen_t)(capacity * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0) return -1;
    return (int)(len / sizeof(gid_t));
#else
    errno = ENOPROTOOPT;
    return -1;
#endif
}

int cshims_accept(int fd, int nonblocking) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0));
}

int cshims_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cshims_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &event);
}

int cshims_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int max, int timeout_ms) {
    struct epoll_event list[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, list, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        tokens[i] = list[i].data.u64;
        events[i] = list[i].events;
    }
    return n;
}

int cshims_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

void cshims_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t r = write(fd, &one, sizeof(one));
    (void)r;
}

void cshims_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t r = read(fd, &value, sizeof(value));
    (void)r;
}

int cshims_pin_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

static int remove_entry(const char *path, const struct stat *info, int flag, struct FTW *walk) {
    (void)info; (void)flag; (void)walk;
    return remove(path);
}

int cshims_remove_tree(const char *path) {
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}
