int foo(static int);
