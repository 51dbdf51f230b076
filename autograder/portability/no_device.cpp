// Chapter 9's library with no device code: what cuobjdump says about a plain host library.
extern "C" int probe_host_only(int x) { return x + 1; }
