// Anchors the precompiled header every test program shares (tests/CMakeLists.txt).
