/*
 * Many string comparisons in one clause all run: the verifier is not
 * left too many branches to explore (dtrace-utils' tst.str_comparison-basic).
 */
#pragma D option quiet

BEGIN
{
	n = 0;
	s1 = "abcdefghi";
	s2 = "jklmnopqr";
	s3 = "abcdefghj";
	n += (s1 < s2 ? 1 : 0);
	n += (s1 <= s2 ? 1 : 0);
	n += (s1 == s2 ? 1 : 0);
	n += (s1 != s2 ? 1 : 0);
	n += (s1 >= s2 ? 1 : 0);
	n += (s1 > s2 ? 1 : 0);
	n += (s2 < s1 ? 1 : 0);
	n += (s2 <= s1 ? 1 : 0);
	n += (s2 == s1 ? 1 : 0);
	n += (s2 != s1 ? 1 : 0);
	n += (s2 >= s1 ? 1 : 0);
	n += (s2 > s1 ? 1 : 0);
	n += (s1 < s3 ? 1 : 0);
	n += (s1 <= s3 ? 1 : 0);
	n += (s1 == s3 ? 1 : 0);
	n += (s1 != s3 ? 1 : 0);
	n += (s1 >= s3 ? 1 : 0);
	n += (s1 > s3 ? 1 : 0);
	n += (s3 < s1 ? 1 : 0);
	n += (s3 <= s1 ? 1 : 0);
	n += (s3 == s1 ? 1 : 0);
	n += (s3 != s1 ? 1 : 0);
	n += (s3 >= s1 ? 1 : 0);
	n += (s3 > s1 ? 1 : 0);
	n += (s1 < s1 ? 1 : 0);
	n += (s1 <= s1 ? 1 : 0);
	n += (s1 == s1 ? 1 : 0);
	n += (s1 != s1 ? 1 : 0);
	n += (s1 >= s1 ? 1 : 0);
	n += (s1 > s1 ? 1 : 0);
	n += (s2 < s2 ? 1 : 0);
	n += (s2 <= s2 ? 1 : 0);
	n += (s2 == s2 ? 1 : 0);
	n += (s2 != s2 ? 1 : 0);
	n += (s2 >= s2 ? 1 : 0);
	n += (s2 > s2 ? 1 : 0);
	n += (s3 < s2 ? 1 : 0);
	n += (s3 <= s2 ? 1 : 0);
	n += (s3 == s2 ? 1 : 0);
	n += (s3 != s2 ? 1 : 0);
	n += (s3 >= s2 ? 1 : 0);
	n += (s3 > s2 ? 1 : 0);
	printf("%d of %d\n", n, 42);
	exit(0);
}
