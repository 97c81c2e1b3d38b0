#pragma once
// Everything nexp builds is compiled with hidden visibility; NEXP_API marks what libnexp_core.so
// exports. Interface and error types must be exported so that their vtables and typeinfo exist
// once per process: `catch (const nexp::Error&)` and `dynamic_cast` then work across plugins.
#define NEXP_API __attribute__((visibility("default")))
