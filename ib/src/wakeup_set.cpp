#include "wakeup_set.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace mpc::ib {

bool WakeupSet::open(std::string* error) {
    epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    event_ = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!epoll_ || !event_) {
        *error = std::string("cannot create the driver's wait set: ") + std::strerror(errno);
        return false;
    }
    return add(event_.get(), error);
}

bool WakeupSet::add(int fd, std::string* error) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
        *error = std::string("epoll_ctl on a driver wait fd: ") + std::strerror(errno);
        return false;
    }
    return true;
}

void WakeupSet::watch(int fd, unsigned events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev);
}

void WakeupSet::remove(int fd) {
    epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

void WakeupSet::wait(int timeout_ms) {
    epoll_event events[4];
    int n = epoll_wait(epoll_.get(), events, 4, timeout_ms);
    for (int i = 0; i < n; ++i) {
        if (events[i].data.fd != event_.get()) continue;
        uint64_t count;
        // Nonblocking: a concurrent wait() may have consumed it already.
        ssize_t r = ::read(event_.get(), &count, sizeof count);
        (void)r;
    }
}

void WakeupSet::interrupt() {
    uint64_t one = 1;
    ssize_t r = ::write(event_.get(), &one, sizeof one);
    (void)r;  // EAGAIN only when the counter is saturated: still readable
}

}  // namespace mpc::ib
