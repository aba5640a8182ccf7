// Per-rank conversion states of the multibyte functions (see libc_state.hpp):
// called without a state of the caller's, glibc's keep one of their own per
// function and per process (a character split over two calls, a shift state
// in stateful encodings). A rank's calls use the rank's instead; local rank 0
// keeps libc's. With a state of the caller's, the call goes to libc as it is.
// (mblen starts afresh at every call in glibc: nothing to keep.) Also taken
// over: __mbrlen, which wchar.h's inline mbrlen calls in optimised code, and
// the checked forms _FORTIFY_SOURCE compiles calls into.
#include <stdlib.h>
#include <wchar.h>

#include <cstring>

#include "libc_state.hpp"

namespace mpc::host {
namespace {

// The rank's state for function `which` when the caller gave none.
mbstate_t* state_for(mbstate_t* given, int which) {
    if (given) return given;
    RankLibc* r = private_libc();
    return r ? &r->multibyte[which] : nullptr;
}

}  // namespace
}  // namespace mpc::host

using mpc::host::RankLibc;
using mpc::host::state_for;

extern "C" {

__attribute__((visibility("default"))) int mbtowc(wchar_t* pwc, const char* s, size_t n) {
    RankLibc* r = mpc::host::private_libc();
    if (!r) return MPC_LIBC(mbtowc)(pwc, s, n);
    mbstate_t& state = r->multibyte[RankLibc::kMbtowc];
    if (!s) {  // back to the initial state; whether the encoding has states
        memset(&state, 0, sizeof(state));
        return mblen(nullptr, 0);
    }
    if (*s == '\0') {
        if (pwc) *pwc = L'\0';
        return 0;
    }
    const size_t result = mbrtowc(pwc, s, n, &state);
    return result >= static_cast<size_t>(-2) ? -1 : static_cast<int>(result);
}

__attribute__((visibility("default"))) int wctomb(char* s, wchar_t wc) {
    RankLibc* r = mpc::host::private_libc();
    if (!r) return MPC_LIBC(wctomb)(s, wc);
    mbstate_t& state = r->multibyte[RankLibc::kWctomb];
    if (!s) {
        memset(&state, 0, sizeof(state));
        return mblen(nullptr, 0);
    }
    return static_cast<int>(wcrtomb(s, wc, &state));
}

__attribute__((visibility("default"))) size_t mbrtowc(wchar_t* pwc, const char* s, size_t n,
                                                      mbstate_t* ps) {
    return MPC_LIBC(mbrtowc)(pwc, s, n, state_for(ps, RankLibc::kMbrtowc));
}

__attribute__((visibility("default"))) size_t mbrlen(const char* s, size_t n, mbstate_t* ps) {
    return MPC_LIBC(mbrlen)(s, n, state_for(ps, RankLibc::kMbrlen));
}

size_t __mbrlen(const char* s, size_t n, mbstate_t* ps);
__attribute__((visibility("default"))) size_t __mbrlen(const char* s, size_t n, mbstate_t* ps) {
    return MPC_LIBC(__mbrlen)(s, n, state_for(ps, RankLibc::kMbrlen));
}

__attribute__((visibility("default"))) size_t wcrtomb(char* s, wchar_t wc, mbstate_t* ps) {
    return MPC_LIBC(wcrtomb)(s, wc, state_for(ps, RankLibc::kWcrtomb));
}

__attribute__((visibility("default"))) size_t mbsrtowcs(wchar_t* dst, const char** src, size_t len,
                                                        mbstate_t* ps) {
    return MPC_LIBC(mbsrtowcs)(dst, src, len, state_for(ps, RankLibc::kMbsrtowcs));
}

__attribute__((visibility("default"))) size_t wcsrtombs(char* dst, const wchar_t** src, size_t len,
                                                        mbstate_t* ps) {
    return MPC_LIBC(wcsrtombs)(dst, src, len, state_for(ps, RankLibc::kWcsrtombs));
}

__attribute__((visibility("default"))) size_t mbsnrtowcs(wchar_t* dst, const char** src, size_t nms,
                                                         size_t len, mbstate_t* ps) {
    return MPC_LIBC(mbsnrtowcs)(dst, src, nms, len, state_for(ps, RankLibc::kMbsnrtowcs));
}

__attribute__((visibility("default"))) size_t wcsnrtombs(char* dst, const wchar_t** src, size_t nwc,
                                                         size_t len, mbstate_t* ps) {
    return MPC_LIBC(wcsnrtombs)(dst, src, nwc, len, state_for(ps, RankLibc::kWcsnrtombs));
}

// ---- The checked forms (-D_FORTIFY_SOURCE) -----------------------------------------

size_t __wcrtomb_chk(char* s, wchar_t wc, mbstate_t* ps, size_t buflen);
size_t __mbsrtowcs_chk(wchar_t* dst, const char** src, size_t len, mbstate_t* ps, size_t dstlen);
size_t __wcsrtombs_chk(char* dst, const wchar_t** src, size_t len, mbstate_t* ps, size_t dstlen);
size_t __mbsnrtowcs_chk(wchar_t* dst, const char** src, size_t nmc, size_t len, mbstate_t* ps,
                        size_t dstlen);
size_t __wcsnrtombs_chk(char* dst, const wchar_t** src, size_t nwc, size_t len, mbstate_t* ps,
                        size_t dstlen);

__attribute__((visibility("default"))) size_t __wcrtomb_chk(char* s, wchar_t wc, mbstate_t* ps,
                                                            size_t buflen) {
    return MPC_LIBC(__wcrtomb_chk)(s, wc, state_for(ps, RankLibc::kWcrtomb), buflen);
}

__attribute__((visibility("default"))) size_t __mbsrtowcs_chk(wchar_t* dst, const char** src,
                                                              size_t len, mbstate_t* ps,
                                                              size_t dstlen) {
    return MPC_LIBC(__mbsrtowcs_chk)(dst, src, len, state_for(ps, RankLibc::kMbsrtowcs), dstlen);
}

__attribute__((visibility("default"))) size_t __wcsrtombs_chk(char* dst, const wchar_t** src,
                                                              size_t len, mbstate_t* ps,
                                                              size_t dstlen) {
    return MPC_LIBC(__wcsrtombs_chk)(dst, src, len, state_for(ps, RankLibc::kWcsrtombs), dstlen);
}

__attribute__((visibility("default"))) size_t __mbsnrtowcs_chk(wchar_t* dst, const char** src,
                                                               size_t nmc, size_t len,
                                                               mbstate_t* ps, size_t dstlen) {
    return MPC_LIBC(__mbsnrtowcs_chk)(dst, src, nmc, len, state_for(ps, RankLibc::kMbsnrtowcs),
                                      dstlen);
}

__attribute__((visibility("default"))) size_t __wcsnrtombs_chk(char* dst, const wchar_t** src,
                                                               size_t nwc, size_t len,
                                                               mbstate_t* ps, size_t dstlen) {
    return MPC_LIBC(__wcsnrtombs_chk)(dst, src, nwc, len, state_for(ps, RankLibc::kWcsnrtombs),
                                      dstlen);
}

// glibc's calls its own wctomb: the rank's needs ours.
[[noreturn]] void __chk_fail();
int __wctomb_chk(char* s, wchar_t wc, size_t buflen);
__attribute__((visibility("default"))) int __wctomb_chk(char* s, wchar_t wc, size_t buflen) {
    if (!mpc::host::private_libc()) return MPC_LIBC(__wctomb_chk)(s, wc, buflen);
    if (s && buflen < static_cast<size_t>(MB_CUR_MAX)) __chk_fail();
    return wctomb(s, wc);
}

}  // extern "C"
