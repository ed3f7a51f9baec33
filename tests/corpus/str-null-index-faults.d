/*
 * A string variable set to NULL (and a missing thread-local or associative
 * array element) compares equal to NULL and has no bytes: indexing it
 * reads address 0 + index and faults there (DTrace's BADADDR, arg4 1),
 * in every storage class. An empty string is not NULL.
 */
string g;

BEGIN { g = "ABC"; g = NULL; }
BEGIN { printf("%d\n", g == NULL); }
BEGIN { trace(g[1]); }
BEGIN { this->s = "ABC"; this->s = NULL; trace(this->s[2]); }
BEGIN { self->s = "ABC"; self->s = NULL; trace(self->s[3]); }
BEGIN { a["k"] = "ABC"; a["k"] = NULL; trace(a["k"][4]); }
BEGIN { self->t = "ABC"; e = ""; printf("%d %d\n", self->t[1], e[0]); }
BEGIN { exit(0); }

ERROR { printf("fault %d at %d\n", arg4, arg5); }
