/* A type of another module's scope may be named, never defined. */
struct foo`bar {
	int x;
};
