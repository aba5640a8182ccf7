// runtime/env: reading MPC_* settings from the environment.
//
// A bad value is a user error: it stops the job with a message that names the
// variable, the value and what is accepted. Settings are read once at start-up,
// never on a fast path.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>

namespace mpc::runtime::env {

// The variable's value, or nullptr when unset or empty.
const char* get(const char* name);

// Integer in [min, max].
long get_int(const char* name, long fallback, long min, long max);

// Byte size with an optional binary suffix: 4096, 64K, 8M, 1G.
size_t get_size(const char* name, size_t fallback);

// 1/0, yes/no, true/false, on/off.
bool get_bool(const char* name, bool fallback);

// Seconds as a decimal number (0.5, 10).
double get_seconds(const char* name, double fallback);

// One of a fixed set of words; returns the associated value.
int get_choice(const char* name, int fallback,
               std::initializer_list<std::pair<const char*, int>> choices);

// Parses a size string; returns false when malformed. Exposed for option parsers.
bool parse_size(const char* text, size_t* out);

}  // namespace mpc::runtime::env
