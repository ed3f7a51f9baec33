/* x op= v reads x before v is evaluated (dtrace-utils'
   arithmetic/tst.complex expects this order). */
BEGIN
{
	i = 1;
	i += i++;
	printf("%d\n", i);
	i = 0;
	i = i++ + ++i;
	i += i++ + --i + ++i - ++i * i;
	printf("%d\n", i);
	a["k"] = 5;
	a["k"] *= a["k"]--;
	printf("%d\n", a["k"]);
	exit(0);
}
