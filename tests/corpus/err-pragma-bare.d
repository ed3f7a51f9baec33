/* A #pragma with nothing after it is malformed. */
inline int foo = 0;
#pragma
