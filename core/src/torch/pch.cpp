// Compiles the shared LibTorch precompiled header; intentionally empty.
