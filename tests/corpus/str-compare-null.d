/*
 * The string subroutines that find nothing return NULL, and scripts test
 * their results against NULL.
 */
BEGIN
{
	printf("%d %d %d %d\n", strchr("abc", 'z') == NULL, strstr("abc", "b") != NULL,
	    NULL == strrchr("abc", 'q'), strtok("", ",") == NULL);
	exit(0);
}
