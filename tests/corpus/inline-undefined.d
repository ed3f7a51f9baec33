inline int limit = nosuch * 2;
