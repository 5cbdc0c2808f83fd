// What every page component is given: the path's params and the query.
export interface PageProps {
  params: Record<string, string>
  query: URLSearchParams
}
