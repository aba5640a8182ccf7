// A C++ user shared library: an inline variable and a template's static member
// (STB_GNU_UNIQUE symbols, one instance per process without rank images), a
// std::string with dynamic initialisation that the program reads directly,
// and a static object with a constructor.
#pragma once

#include <string>
#include <vector>

inline int cxx_inline_counter = 0;

template <class T>
struct CxxCounter {
    static int value;
};
template <class T>
int CxxCounter<T>::value = 0;

extern std::string cxx_name;

struct CxxLibraryView {
    int* inline_counter;  // &cxx_inline_counter as the library sees it
    int* template_value;  // &CxxCounter<int>::value as the library sees it
    std::string* name;    // &cxx_name as the library sees it
    int constructions;    // of the library's static object
    std::vector<int> items;
};

void cxx_library_add(int value);
CxxLibraryView cxx_library_view();
