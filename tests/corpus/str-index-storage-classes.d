/* Strings index as char arrays in every storage class (DTrace allows s[i]). */
string a[int];

BEGIN
{
	s = "global";
	self->t = "thread";
	this->c = "clause";
	a[1] = "element";
	printf("%c %c %c %c %c %c\n", s[0], self->t[1], this->c[5], a[1][6], execname[0], "lit"[2]);
	printf("%d\n", s[6]);
	exit(0);
}
