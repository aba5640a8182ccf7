// Per-rank static result buffers (see libc_state.hpp): the functions that
// return a pointer to libc's own buffer fill the rank's instead, through
// their reentrant forms, so that a result stays what it was while other
// ranks (on other cores, or on the same core while this one waits in MPI)
// call the same function. Local rank 0 keeps libc's buffers where they are
// one per process; strerror, strsignal and inet_ntoa, whose buffers glibc
// keeps per thread (and so per core here), are per rank for every rank.
//
// The time zone is one per node process (libc reads TZ from the process's
// environment, rank 0's); a rank's copies of tzname, timezone and daylight
// follow libc's whenever the calls that set them (tzset, localtime, ctime,
// mktime) run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>

#include "libc_state.hpp"

namespace mpc::host {
namespace {

// Held around libc's calls that may (re)set the time zone. glibc serialises
// them itself, with a lock ThreadSanitizer cannot see (libc is not
// instrumented): without this one, TSan saw a rank read the tzname string
// another rank's tzset had just allocated as a race (libc_buffers n4). The
// strings are never freed, and these calls are off every fast path.
std::mutex g_time_zone_lock;

// The rank's copies of tzname, timezone and daylight take libc's values.
void follow_time_zone(RankLibc& r) {
    if (void* p = program_copy(r, kTzname)) memcpy(p, &tzname, sizeof(tzname));
    if (void* p = program_copy(r, kTimezone)) memcpy(p, &timezone, sizeof(timezone));
    if (void* p = program_copy(r, kDaylight)) memcpy(p, &daylight, sizeof(daylight));
}

// Ranks whose images are their own (the others read libc's variables).
void after_time_zone_set() {
    if (RankLibc* r = private_libc()) follow_time_zone(*r);
}

// asctime's format with glibc's larger static buffer: a year of up to ten
// digits fits (asctime_r's 26 bytes would not), and the names are always the
// C locale's.
char* format_asctime(const struct tm* tp, char* buf, size_t size) {
    static const char days[] = "SunMonTueWedThuFriSat";
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    if (!tp) {
        errno = EINVAL;
        return nullptr;
    }
    if (tp->tm_year > INT_MAX - 1900) {
        errno = EOVERFLOW;
        return nullptr;
    }
    const char* day = tp->tm_wday < 0 || tp->tm_wday >= 7 ? "???" : days + 3 * tp->tm_wday;
    const char* month = tp->tm_mon < 0 || tp->tm_mon >= 12 ? "???" : months + 3 * tp->tm_mon;
    const int n = snprintf(buf, size, "%.3s %.3s%3d %.2d:%.2d:%.2d %d\n", day, month, tp->tm_mday,
                           tp->tm_hour, tp->tm_min, tp->tm_sec, 1900 + tp->tm_year);
    if (n < 0) return nullptr;
    if (static_cast<size_t>(n) >= size) {
        errno = EOVERFLOW;
        return nullptr;
    }
    return buf;
}

struct tm* rank_localtime(RankLibc& r, const time_t* t) {
    tzset();  // localtime reads TZ again every time (localtime_r need not)
    struct tm* tm = localtime_r(t, &r.tm);
    follow_time_zone(r);
    return tm;
}

// Copies a result libc formatted into its per-thread buffer before another
// rank of this core can overwrite it.
char* keep(char* result, char* buf, size_t size) {
    if (!result) return nullptr;
    strncpy(buf, result, size - 1);
    buf[size - 1] = '\0';
    return buf;
}

}  // namespace
}  // namespace mpc::host

using mpc::host::larger;
using mpc::host::private_libc;
using mpc::host::rank_libc;
using mpc::host::RankLibc;

extern "C" {

// ---- Time --------------------------------------------------------------------

__attribute__((visibility("default"))) void tzset() {
    std::lock_guard<std::mutex> g(mpc::host::g_time_zone_lock);
    MPC_LIBC(tzset)();
    mpc::host::after_time_zone_set();
}

__attribute__((visibility("default"))) time_t mktime(struct tm* tm) {
    std::lock_guard<std::mutex> g(mpc::host::g_time_zone_lock);
    const time_t t = MPC_LIBC(mktime)(tm);
    mpc::host::after_time_zone_set();
    return t;
}

__attribute__((visibility("default"))) struct tm* localtime(const time_t* t) {
    if (RankLibc* r = private_libc()) return mpc::host::rank_localtime(*r, t);
    std::lock_guard<std::mutex> g(mpc::host::g_time_zone_lock);
    return MPC_LIBC(localtime)(t);
}

__attribute__((visibility("default"))) struct tm* gmtime(const time_t* t) {
    if (RankLibc* r = private_libc()) return gmtime_r(t, &r->tm);
    return MPC_LIBC(gmtime)(t);
}

__attribute__((visibility("default"))) char* asctime(const struct tm* tp) {
    if (RankLibc* r = private_libc())
        return mpc::host::format_asctime(tp, r->asctime, sizeof(r->asctime));
    return MPC_LIBC(asctime)(tp);
}

// As glibc's: asctime(localtime(t)), both results in the rank's buffers.
__attribute__((visibility("default"))) char* ctime(const time_t* t) {
    if (RankLibc* r = private_libc())
        return mpc::host::format_asctime(mpc::host::rank_localtime(*r, t), r->asctime,
                                         sizeof(r->asctime));
    std::lock_guard<std::mutex> g(mpc::host::g_time_zone_lock);
    return MPC_LIBC(ctime)(t);
}

// Errors go to the rank's getdate_err.
__attribute__((visibility("default"))) struct tm* getdate(const char* string) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getdate)(string);
    RankLibc::Larger& l = larger(*r);
    const int error = getdate_r(string, &l.getdate);
    if (error == 0) return &l.getdate;
    *mpc::host::rank_variable_as<int>(*r, mpc::host::kGetdateErr) = error;
    return nullptr;
}

// ---- Messages: glibc's buffers are per thread, shared by a core's ranks ------

__attribute__((visibility("default"))) char* strerror(int errnum) {
    RankLibc* r = rank_libc();
    if (!r) return MPC_LIBC(strerror)(errnum);
    const int saved = errno;
    // GNU strerror_r: the constant message, or "Unknown error N" in buf.
    char* s = strerror_r(errnum, r->strerror, sizeof(r->strerror));
    errno = saved;
    return s;
}

__attribute__((visibility("default"))) char* strsignal(int sig) {
    RankLibc* r = rank_libc();
    if (!r || sigdescr_np(sig)) return MPC_LIBC(strsignal)(sig);  // a constant message
    return mpc::host::keep(MPC_LIBC(strsignal)(sig), r->strsignal, sizeof(r->strsignal));
}

__attribute__((visibility("default"))) char* inet_ntoa(struct in_addr in) {
    RankLibc* r = rank_libc();
    if (!r) return MPC_LIBC(inet_ntoa)(in);
    const auto* b = reinterpret_cast<const unsigned char*>(&in);
    snprintf(r->inet_ntoa, sizeof(r->inet_ntoa), "%d.%d.%d.%d", b[0], b[1], b[2], b[3]);
    return r->inet_ntoa;
}

// ---- Names of terminals and files ------------------------------------------------

__attribute__((visibility("default"))) char* ttyname(int fd) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(ttyname)(fd);
    RankLibc::Larger& l = larger(*r);
    const int rc = ttyname_r(fd, l.ttyname, sizeof(l.ttyname));
    if (rc == 0) return l.ttyname;
    errno = rc;
    return nullptr;
}

__attribute__((visibility("default"))) char* ptsname(int fd) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(ptsname)(fd);
    RankLibc::Larger& l = larger(*r);
    return ptsname_r(fd, l.ptsname, sizeof(l.ptsname)) == 0 ? l.ptsname : nullptr;
}

__attribute__((visibility("default"))) char* tmpnam(char* s) {
    RankLibc* r = s ? nullptr : private_libc();
    return MPC_LIBC(tmpnam)(r ? larger(*r).tmpnam : s);
}

__attribute__((visibility("default"))) char* ctermid(char* s) {
    RankLibc* r = s ? nullptr : private_libc();
    return MPC_LIBC(ctermid)(r ? larger(*r).ctermid : s);
}

__attribute__((visibility("default"))) char* cuserid(char* s) {
    RankLibc* r = s ? nullptr : private_libc();
    return MPC_LIBC(cuserid)(r ? larger(*r).cuserid : s);
}

__attribute__((visibility("default"))) char* getlogin() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(getlogin)();
    RankLibc::Larger& l = larger(*r);
    const int rc = getlogin_r(l.getlogin, sizeof(l.getlogin));
    if (rc == 0) return l.getlogin;
    errno = rc;
    return nullptr;
}

// ---- Numbers as text ----------------------------------------------------------------

// The low 32 bits of n in base 64, least significant digit first.
__attribute__((visibility("default"))) char* l64a(long n) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(l64a)(n);
    static const char digits[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    char* out = larger(*r).l64a;
    char* p = out;
    for (unsigned long m = static_cast<unsigned long>(n) & 0xffffffffUL; m; m >>= 6)
        *p++ = digits[m & 0x3f];
    *p = '\0';
    return out;
}

// As glibc's: the buffer comes back whatever happened (20 bytes for ecvt,
// room for every digit of DBL_MAX for fcvt).
__attribute__((visibility("default"))) char* ecvt(double value, int ndigit, int* decpt, int* sign) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(ecvt)(value, ndigit, decpt, sign);
    RankLibc::Larger& l = larger(*r);
    (void)ecvt_r(value, ndigit, decpt, sign, l.ecvt, sizeof(l.ecvt));
    return l.ecvt;
}

__attribute__((visibility("default"))) char* fcvt(double value, int ndigit, int* decpt, int* sign) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(fcvt)(value, ndigit, decpt, sign);
    RankLibc::Larger& l = larger(*r);
    (void)fcvt_r(value, ndigit, decpt, sign, l.fcvt, sizeof(l.fcvt));
    return l.fcvt;
}

}  // extern "C"
