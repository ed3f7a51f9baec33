inline int foo
#pragma D attributes incorrect_attr foo

BEGIN
{
	exit(0);
}
